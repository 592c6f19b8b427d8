// Doctor check of a listen address (--listen, --metrics_listen): can this process bind it now? A
// bind test (with SO_REUSEADDR, as the agent's listener sets it), and when the port is taken, who
// holds it: the socket's inode from /proc/net/tcp and tcp6, then the process whose open files
// include that socket (visible for this user's processes, or all as root).
// Thread-safety: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "prover/doctor/doctor_check.h"

namespace wipeproof {

// The inode of the socket listening (state 0A) on TCP `port` in /proc/net/tcp or tcp6 text
// ("sl local_address rem_address st ... inode" rows, addresses as HEXIP:HEXPORT); empty when none.
std::optional<uint64_t> ListeningInode(const std::string& proc_net_tcp_text, unsigned port);

// "pid 1234 (nginx)" of the process holding socket `inode`, from /proc/*/fd; empty when not found.
std::string SocketHolder(uint64_t inode);

// `check` names the row ("listen port", "metrics port"), `flag` the flag ("--listen").
// OK when the address binds (port 0: any free port, always OK once the host resolves);
// FAIL naming the port and, when /proc tells, the process holding it; FAIL for an address that is
// not HOST:PORT or a host that does not resolve.
CheckResult CheckListenAddress(const std::string& check, const std::string& flag, const std::string& address);

}  // namespace wipeproof
