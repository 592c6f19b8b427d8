#include "prover/doctor/doctor_port.h"

#include <dirent.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace wipeproof {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The program name of process `pid`: the file name of its argv[0] (/proc/PID/cmdline; comm is cut
// at 15 characters: "wipeproof-prove"), else comm; at most 64 characters.
std::string ProcessName(const std::string& pid) {
  std::string name = ReadText("/proc/" + pid + "/cmdline");
  name = name.substr(0, name.find('\0'));
  name = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
  if (name.empty()) {
    name = ReadText("/proc/" + pid + "/comm");
    while (!name.empty() && name.back() == '\n') name.pop_back();
  }
  return name.substr(0, 64);
}

}  // namespace

std::optional<uint64_t> ListeningInode(const std::string& proc_net_tcp_text, unsigned port) {
  std::istringstream lines(proc_net_tcp_text);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    std::istringstream row(line);
    std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    if (!(row >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode)) continue;
    const size_t colon = local.rfind(':');
    if (colon == std::string::npos || state != "0A") continue;
    char* end = nullptr;
    const unsigned long local_port = std::strtoul(local.c_str() + colon + 1, &end, 16);
    if (*end != '\0' || local_port != port) continue;
    const unsigned long long number = std::strtoull(inode.c_str(), &end, 10);
    if (*end == '\0' && number != 0) return number;
  }
  return std::nullopt;
}

std::string SocketHolder(uint64_t inode) {
  const std::string target = "socket:[" + std::to_string(inode) + "]";
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return "";
  std::string holder;
  while (dirent* entry = readdir(proc)) {
    const std::string pid = entry->d_name;
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string fd_dir = "/proc/" + pid + "/fd";
    DIR* fds = opendir(fd_dir.c_str());
    if (fds == nullptr) continue;  // another user's process: not visible unless root
    while (dirent* fd = readdir(fds)) {
      char link[64];
      const ssize_t n = readlink((fd_dir + "/" + fd->d_name).c_str(), link, sizeof link - 1);
      if (n <= 0) continue;
      link[n] = '\0';
      if (target == link) {
        holder = "pid " + pid + " (" + ProcessName(pid) + ")";
        break;
      }
    }
    closedir(fds);
    if (!holder.empty()) break;
  }
  closedir(proc);
  return holder;
}

CheckResult CheckListenAddress(const std::string& check, const std::string& flag, const std::string& address) {
  // The wipe port must be reachable by the challenger; metrics stay on loopback by default
  // (docs/metrics.md "Scraping safely").
  const std::string example = flag == "--metrics_listen" ? "127.0.0.1:9401" : "0.0.0.0:7300";
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    return {check, CheckStatus::kFail, flag + "=" + address + " is not HOST:PORT",
            "give e.g. " + flag + "=" + example};
  }
  std::string host = address.substr(0, colon);
  const std::string port_text = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "*") host = "0.0.0.0";
  // serve refuses a port over 65535 (getaddrinfo would take it modulo 2^16); an IPv6 host needs
  // brackets ("[::1]:7300"), as serve reads it.
  char* end = nullptr;
  const unsigned long port_number = std::strtoul(port_text.c_str(), &end, 10);
  if (port_text.find_first_not_of("0123456789") != std::string::npos || *end != '\0' || port_number > 65535) {
    return {check, CheckStatus::kFail, flag + "=" + address + ": the port is not a number from 0 to 65535",
            "give e.g. " + flag + "=" + example};
  }
  if (host.find(':') != std::string::npos && address.front() != '[') {
    return {check, CheckStatus::kFail, flag + "=" + address + ": an IPv6 address needs brackets",
            "give e.g. " + flag + "=[::1]:7300"};
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port_text.c_str(), &hints, &found) != 0 || found == nullptr) {
    return {check, CheckStatus::kFail, flag + "=" + address + ": the host does not resolve or the port is not a number",
            "give an address of this node"};
  }
  int err = 0;
  {
    const int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
    if (fd < 0) {
      err = errno;
    } else {
      const int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (bind(fd, found->ai_addr, found->ai_addrlen) != 0) err = errno;
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (err == 0) {
    return {check, CheckStatus::kOk,
            flag + "=" + address + (port_text == "0" ? ": any free port (chosen at start-up)" : ": free"), ""};
  }
  const unsigned port = static_cast<unsigned>(std::strtoul(port_text.c_str(), nullptr, 10));
  if (err == EADDRINUSE) {
    std::string holder;
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
      if (auto inode = ListeningInode(ReadText(table), port); inode.has_value()) {
        holder = SocketHolder(*inode);
        if (holder.empty()) holder = "a process not visible to this user (socket inode " + std::to_string(*inode) + ")";
        break;
      }
    }
    return {
        check, CheckStatus::kFail,
        flag + "=" + address + ": port " + port_text + " is already in use" + (holder.empty() ? "" : " by " + holder),
        "stop the process holding port " + port_text + " or choose another " + flag};
  }
  return {
      check, CheckStatus::kFail, flag + "=" + address + ": cannot bind: " + std::strerror(err),
      err == EACCES ? "ports below 1024 need CAP_NET_BIND_SERVICE; choose a higher port" : "choose another " + flag};
}

}  // namespace wipeproof
