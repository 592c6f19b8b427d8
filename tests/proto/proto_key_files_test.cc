// Key files: modes on disk, refusal of exposed secret keys, atomic no-overwrite, round trips.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/hex.h"
#include "proto/key_files.h"

namespace wipeproof::proto {
namespace {

class ProtoKeyFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/wp_proto_keys_XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  static mode_t ModeOf(const std::string& path) {
    struct stat st;
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }
  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void WriteText(const std::string& path, const std::string& text, mode_t mode) {
    std::ofstream(path) << text;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
  }

  std::string dir_;
};

TEST_F(ProtoKeyFilesTest, GenerateWritesModesAndRoundTrips) {
  auto gen = GenerateKeyFiles(dir_ + "/node");
  ASSERT_TRUE(gen.ok()) << gen.status().ToString();
  EXPECT_EQ(gen->secret_path, dir_ + "/node.key");
  EXPECT_EQ(gen->public_path, dir_ + "/node.pub");
  EXPECT_EQ(ModeOf(gen->secret_path), 0600u);
  EXPECT_EQ(ModeOf(gen->public_path), 0644u);
  EXPECT_EQ(gen->key_id, KeyIdOf(gen->public_key));

  auto secret = ReadSecretKeyFile(gen->secret_path);
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  EXPECT_EQ(secret->public_key, gen->public_key);
  EXPECT_EQ(KeyPairFromSeed(secret->seed()).secret_key, secret->secret_key);
  auto pub = ReadPublicKeyFile(gen->public_path);
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  EXPECT_EQ(*pub, gen->public_key);

  const std::string text = ReadAll(gen->public_path);
  EXPECT_NE(text.find("format: wipeproof-ed25519-public-v1\n"), std::string::npos);
  EXPECT_NE(text.find("public-key: " + HexEncode(gen->public_key.data(), kPublicKeyBytes) + "\n"), std::string::npos);
  EXPECT_NE(text.find("key-id: " + KeyIdHex(gen->key_id) + "\n"), std::string::npos);
  EXPECT_EQ(text.find("secret"), std::string::npos);
  // No temporary files left behind.
  EXPECT_EQ(std::system(("test $(ls -A '" + dir_ + "' | wc -l) -eq 2").c_str()), 0);
}

TEST_F(ProtoKeyFilesTest, RefusesToOverwriteUnlessAsked) {
  auto first = GenerateKeyFiles(dir_ + "/c");
  ASSERT_TRUE(first.ok());
  auto again = GenerateKeyFiles(dir_ + "/c");
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find(dir_ + "/c.key"), std::string::npos);
  auto pub = ReadPublicKeyFile(dir_ + "/c.pub");
  ASSERT_TRUE(pub.ok());
  EXPECT_EQ(*pub, first->public_key);  // untouched

  auto replaced = GenerateKeyFiles(dir_ + "/c", /*overwrite=*/true);
  ASSERT_TRUE(replaced.ok());
  EXPECT_NE(replaced->public_key, first->public_key);
  EXPECT_EQ(ModeOf(dir_ + "/c.key"), 0600u);
  EXPECT_EQ(ReadSecretKeyFile(dir_ + "/c.key")->public_key, replaced->public_key);
  // Only the public file existing is enough to refuse, and nothing is written then.
  ASSERT_EQ(::unlink((dir_ + "/c.key").c_str()), 0);
  EXPECT_EQ(GenerateKeyFiles(dir_ + "/c").status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(::access((dir_ + "/c.key").c_str(), F_OK), 0);
}

TEST_F(ProtoKeyFilesTest, GroupOrOtherAccessibleSecretKeyRefused) {
  auto gen = GenerateKeyFiles(dir_ + "/k");
  ASSERT_TRUE(gen.ok());
  for (mode_t mode : {0640, 0604, 0660, 0620, 0644}) {
    ASSERT_EQ(::chmod(gen->secret_path.c_str(), mode), 0);
    auto key = ReadSecretKeyFile(gen->secret_path);
    ASSERT_FALSE(key.ok()) << std::oct << mode;
    EXPECT_EQ(key.status().code(), StatusCode::kPermissionDenied);
    EXPECT_NE(key.status().message().find("chmod 600 " + gen->secret_path), std::string::npos)
        << key.status().ToString();
  }
  ASSERT_EQ(::chmod(gen->secret_path.c_str(), 0400), 0);
  EXPECT_TRUE(ReadSecretKeyFile(gen->secret_path).ok());
  // The public file may be world-readable.
  EXPECT_TRUE(ReadPublicKeyFile(gen->public_path).ok());
  // Given where the secret key is needed, it is named for what it is, before its (public) mode; and
  // the other way round.
  auto as_secret = ReadSecretKeyFile(gen->public_path);
  EXPECT_EQ(as_secret.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(as_secret.status().message(),
            gen->public_path + " is a public key file; this needs the secret key file (PREFIX.key)");
  auto as_public = ReadPublicKeyFile(gen->secret_path);
  EXPECT_EQ(as_public.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(as_public.status().message(),
            gen->secret_path + " is a secret key file; give the public key file (PREFIX.pub)");
}

TEST_F(ProtoKeyFilesTest, BadContentsRejected) {
  auto gen = GenerateKeyFiles(dir_ + "/k");
  ASSERT_TRUE(gen.ok());
  const std::string good = ReadAll(gen->secret_path);
  const std::string path = dir_ + "/bad.key";

  std::string wrong_pub = good;
  size_t at = wrong_pub.find("public-key: ") + 12;
  wrong_pub[at] = wrong_pub[at] == '0' ? '1' : '0';
  WriteText(path, wrong_pub, 0600);
  auto r1 = ReadSecretKeyFile(path);
  EXPECT_EQ(r1.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r1.status().message(), path + ": public-key does not match secret-seed");

  std::string short_seed = good;
  at = short_seed.find("secret-seed: ") + 13;
  short_seed.erase(at, 2);
  WriteText(path, short_seed, 0600);
  EXPECT_EQ(ReadSecretKeyFile(path).status().code(), StatusCode::kInvalidArgument);

  WriteText(path, "format: wipeproof-ed25519-public-v1\n", 0600);
  EXPECT_EQ(ReadSecretKeyFile(path).status().code(), StatusCode::kInvalidArgument);

  WriteText(path, good + "extra: 1\n", 0600);
  EXPECT_EQ(ReadSecretKeyFile(path).status().code(), StatusCode::kInvalidArgument);

  WriteText(path, std::string(kMaxKeyFileBytes + 1, '#'), 0600);
  EXPECT_EQ(ReadSecretKeyFile(path).status().code(), StatusCode::kInvalidArgument);

  // A public file whose key-id does not match its key.
  std::string pub = ReadAll(gen->public_path);
  at = pub.find("key-id: ") + 8;
  pub[at] = pub[at] == 'a' ? 'b' : 'a';
  WriteText(dir_ + "/bad.pub", pub, 0644);
  EXPECT_EQ(ReadPublicKeyFile(dir_ + "/bad.pub").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ProtoKeyFilesTest, MissingFilesAndFolders) {
  EXPECT_EQ(ReadSecretKeyFile(dir_ + "/none.key").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadPublicKeyFile(dir_ + "/none.pub").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(GenerateKeyFiles(dir_ + "/no/such/dir/k").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(GenerateKeyFiles("").status().code(), StatusCode::kInvalidArgument);
}

// A FIFO where a key file should be is refused at once: opening it must not wait for a writer.
TEST_F(ProtoKeyFilesTest, AFifoIsRefusedWithoutWaiting) {
  const std::string fifo = dir_ + "/node.key";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto secret = ReadSecretKeyFile(fifo);
  ASSERT_FALSE(secret.ok());
  EXPECT_NE(secret.status().message().find("is not a regular file"), std::string::npos) << secret.status().ToString();
  auto pub = ReadPublicKeyFile(fifo);
  ASSERT_FALSE(pub.ok());
  EXPECT_NE(pub.status().message().find("is not a regular file"), std::string::npos) << pub.status().ToString();
}

TEST(ProtoPublicKeyHexTest, Parses) {
  auto key = ParsePublicKeyHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ((*key)[0], 0xd7);
  EXPECT_EQ((*key)[31], 0x1a);
  EXPECT_EQ(ParsePublicKeyHex("d75a98").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace wipeproof::proto
