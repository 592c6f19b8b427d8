// WriteFileReplacing (common/file_write.h): replaces regular files atomically, writes through to
// devices and FIFOs, and never follows or replaces a symlink, directory or planted temporary file.
// threat-model: T-OUTPUT-PATHS
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "common/file_write.h"

namespace wipeproof {
namespace {

class FileWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/wp-file-write-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static void Write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
  // Names in the folder, so a test can tell that no temporary file was left behind.
  size_t Entries() const {
    size_t n = 0;
    for (auto it = std::filesystem::directory_iterator(dir_); it != std::filesystem::directory_iterator(); ++it) ++n;
    return n;
  }

  std::string dir_;
};

TEST_F(FileWriteTest, CreatesANewFileWithTheModeAsked) {
  const std::string path = File("out.json");
  ASSERT_TRUE(WriteFileReplacing(path, "{\"a\": 1}\n").ok());
  EXPECT_EQ(Read(path), "{\"a\": 1}\n");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(Entries(), 1u);

  const std::string secret = File("secret");
  ASSERT_TRUE(WriteFileReplacing(secret, "s", 0600).ok());
  ASSERT_EQ(::stat(secret.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(FileWriteTest, ReplacesARegularFileByRename) {
  const std::string path = File("report.md");
  Write(path, "old contents that are longer than the new ones\n");
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  ASSERT_TRUE(WriteFileReplacing(path, "new\n").ok());
  EXPECT_EQ(Read(path), "new\n");
  struct stat after;
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);  // a new file renamed into place, not the old one truncated
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(FileWriteTest, RefusesASymlinkToARegularFileAndLeavesTheVictimAlone) {
  const std::string victim = File("victim");
  Write(victim, "precious\n");
  const std::string link = File("out.json");
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  Status s = WriteFileReplacing(link, "attacker chose this\n");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.ToString().find("symbolic link"), std::string::npos) << s.ToString();
  EXPECT_EQ(Read(victim), "precious\n");
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));  // the link itself is not replaced either
  EXPECT_EQ(Entries(), 2u);
}

TEST_F(FileWriteTest, RefusesADanglingSymlink) {
  const std::string link = File("out.json");
  const std::string target = File("would-be-created");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_EQ(WriteFileReplacing(link, "x").code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST_F(FileWriteTest, IgnoresAPrePlantedTmpSymlink) {
  const std::string victim = File("victim");
  Write(victim, "precious\n");
  const std::string path = File("out.json");
  for (const char* suffix : {".tmp", ".tmp.XXXXXX"}) {
    const std::string planted = path + suffix;
    ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  }
  ASSERT_TRUE(WriteFileReplacing(path, "report\n").ok());
  EXPECT_EQ(Read(path), "report\n");
  EXPECT_EQ(Read(victim), "precious\n");
  EXPECT_EQ(Entries(), 4u);  // victim, two planted links, the output
}

TEST_F(FileWriteTest, RefusesADirectory) {
  const std::string path = File("a-folder");
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  Status s = WriteFileReplacing(path, "x");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.ToString().find("directory"), std::string::npos) << s.ToString();
  EXPECT_TRUE(std::filesystem::is_directory(path));
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(FileWriteTest, WritesThroughToDevNullWithoutReplacingIt) {
  ASSERT_TRUE(WriteFileReplacing("/dev/null", "discarded\n").ok());
  struct stat st;
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(FileWriteTest, DevFullIsDiskFullAndStaysADevice) {
  struct stat st;
  if (::lstat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) GTEST_SKIP() << "no /dev/full here";
  Status s = WriteFileReplacing("/dev/full", "no room\n");
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  ASSERT_EQ(::lstat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(FileWriteTest, WritesThroughAFifoAndASymlinkToIt) {
  const std::string fifo = File("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string link = File("link-to-pipe");
  ASSERT_EQ(::symlink(fifo.c_str(), link.c_str()), 0);
  for (const std::string& path : {fifo, link}) {
    std::string received;
    std::thread reader([&] { received = Read(fifo); });
    Status s = WriteFileReplacing(path, "through the pipe\n");
    if (!s.ok()) ::close(::open(fifo.c_str(), O_WRONLY));  // release the reader so the test fails, not hangs
    reader.join();
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(received, "through the pipe\n");
    struct stat st;
    ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
  }
  EXPECT_EQ(Entries(), 2u);
}

TEST_F(FileWriteTest, MissingFolderIsAnErrorNamingThePath) {
  const std::string path = File("no-such-folder/out.json");
  Status s = WriteFileReplacing(path, "x");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);  // an input to fix (exit 2), not an internal error
  EXPECT_EQ(s.message(),
            "cannot write " + path + ": the folder " + File("no-such-folder") + " does not exist; create it first");
}

// A folder that exists but makes no new file (/proc: creating a file there fails with ENOENT) is
// not called missing.
TEST_F(FileWriteTest, AFolderThatTakesNoNewFilesIsNotCalledMissing) {
  struct stat st {};
  if (::stat("/proc/self", &st) != 0) GTEST_SKIP() << "no /proc";
  Status s = WriteFileReplacing("/proc/wipeproof-test.json", "x");
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message().rfind("cannot write /proc/wipeproof-test.json: the folder /proc takes no new files (", 0), 0u)
      << s.message();
}

}  // namespace
}  // namespace wipeproof
