#include "common/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <chrono>
#include <cstring>

extern char** environ;

namespace wipeproof {

namespace {

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Closes a descriptor once.
struct Fd {
  int fd = -1;
  ~Fd() { Close(); }
  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text;
}

std::string Tail(const std::string& text, size_t bytes) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

// Appends what `fd` has to `out` (up to the cap); closes it at end of file.
void Drain(Fd& fd, std::string& out) {
  char buffer[4096];
  const ssize_t n = ::read(fd.fd, buffer, sizeof(buffer));
  if (n > 0) {
    const size_t room = kMaxProcessOutputBytes - std::min(out.size(), kMaxProcessOutputBytes);
    out.append(buffer, std::min(static_cast<size_t>(n), room));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    fd.Close();
  }
}

}  // namespace

std::string CommandLineText(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& a : argv) {
    if (!text.empty()) text += ' ';
    text += a;
  }
  return text;
}

StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv, uint64_t timeout_us,
                                   const std::vector<std::string>& environment) {
  if (argv.empty() || argv[0].empty()) return InvalidArgumentError("no program to run");
  // This process's environment, each NAME that `environment` sets replaced by its entry.
  std::vector<std::string> names;
  for (const std::string& e : environment) {
    const size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) return InvalidArgumentError("environment entry without NAME=: '" + e + "'");
    names.push_back(e.substr(0, eq + 1));
  }
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(names.begin(), names.end(),
                                      [&](const std::string& n) { return entry.substr(0, n.size()) == n; });
    if (!replaced) envp.push_back(*e);
  }
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return InternalError(std::string("pipe: ") + std::strerror(errno));
  Fd out_read{out_pipe[0]}, out_write{out_pipe[1]};
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return InternalError(std::string("pipe: ") + std::strerror(errno));
  Fd err_read{err_pipe[0]}, err_write{err_pipe[1]};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_write.fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so a timeout kills what it started too; default signal handling.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    return NotFoundError("cannot run '" + argv[0] + "': " + std::strerror(spawned));
  }
  out_write.Close();
  err_write.Close();

  ProcessResult result;
  const int64_t deadline = NowUs() + static_cast<int64_t>(std::min<uint64_t>(timeout_us, INT64_MAX / 2));
  bool timed_out = false;
  while (out_read.fd >= 0 || err_read.fd >= 0) {
    const int64_t left_us = deadline - NowUs();
    if (left_us <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_read.fd, POLLIN, 0}, {err_read.fd, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left_us / 1000 + 1, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (fds[0].revents != 0) Drain(out_read, result.stdout_text);
    if (fds[1].revents != 0) Drain(err_read, result.stderr_text);
  }
  int status = 0;
  for (;;) {
    if (timed_out) ::kill(-pid, SIGKILL);
    const pid_t waited = ::waitpid(pid, &status, timed_out ? 0 : WNOHANG);
    if (waited == pid) break;
    if (waited < 0 && errno != EINTR) return InternalError(std::string("waitpid: ") + std::strerror(errno));
    if (waited == 0) {
      // Both pipes closed but the program runs on (it closed them itself): wait out the timeout.
      if (NowUs() >= deadline) {
        timed_out = true;
      } else {
        ::usleep(10'000);
      }
    }
  }
  if (timed_out) {
    ::kill(-pid, SIGKILL);  // anything it left running in its group
    return DeadlineExceededError(
        "'" + CommandLineText(argv) + "' did not finish within " +
        std::to_string(timeout_us / 1'000'000.0).substr(0, 6) + " s; killed" +
        (result.stderr_text.empty() ? "" : " (stderr: " + Trimmed(Tail(result.stderr_text, 512)) + ")"));
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

StatusOr<std::string> RunProcessChecked(const std::vector<std::string>& argv, uint64_t timeout_us,
                                        const std::vector<std::string>& environment) {
  WP_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(argv, timeout_us, environment));
  if (r.exit_code != 0) {
    std::string said = Trimmed(r.stderr_text.empty() ? r.stdout_text : r.stderr_text);
    return UnavailableError("'" + CommandLineText(argv) + "' exited with status " + std::to_string(r.exit_code) +
                            (said.empty() ? "" : ": " + Tail(said, 1024)));
  }
  return std::move(r.stdout_text);
}

}  // namespace wipeproof
