#include "challenger/cli/cli_ledger_certificate.h"

#include <cstdint>
#include <map>

#include "challenger/ledger/wipe_schema.h"
#include "common/cli_exit_codes.h"
#include "common/clock.h"
#include "common/file_write.h"
#include "common/hex.h"
#include "common/json_fields.h"
#include "common/terminal_text.h"

namespace wipeproof {
namespace {

// The largest certificate read: as the largest export `ledger audit` reads (cli_ledger.cc).
constexpr uint64_t kMaxCertificateFileBytes = uint64_t{1} << 30;

std::string KeyId(const proto::PublicKey& key) { return proto::KeyIdHex(proto::KeyIdOf(key)); }

void PrintVerified(const Certificate& c, const CertificateTrust& trust, std::ostream& out) {
  std::map<proto::Bytes, const SessionAudit*> audits;
  for (const SessionAudit& s : c.audit.sessions) audits[s.session_id] = &s;
  for (const auto& session : c.document.at("certified").at("sessions")) {
    auto id = HexDecode(session.at("session_id").get<std::string>());
    const SessionAudit* audit = id.ok() && audits.count(*id) > 0 ? audits[*id] : nullptr;
    const auto& outcome = session.at("outcome");
    out << " session " << session.at("session_id").get<std::string>() << "  node "
        << TerminalSafe(session.at("node").get<std::string>()) << "  "
        << (outcome.at("pass").get<bool>() ? std::string("pass")
                                           : "fail (" + outcome.at("failure_reason").get<std::string>() + ")");
    if (audit != nullptr) {
      out << "  " << audit->rounds << " rounds, " << audit->labels_recomputed << " labels recomputed, transcript "
          << (audit->transcript_checked ? "matches" : "n/a");
    }
    out << "\n   statement: " << TerminalSafe(session.at("statements").at("bound").at("statement").get<std::string>())
        << "\n";
    const auto& occupancy = session.at("statements").at("occupancy");
    if (!occupancy.is_null()) {
      out << "   occupancy: "
          << TerminalSafe(occupancy.at("stated").get<bool>() ? occupancy.at("statement").get<std::string>()
                                                             : std::string("nothing stated"))
          << "\n";
    }
    if (audit != nullptr && !audit->failure_confirmation.empty()) {
      out << "   failure: " << TerminalSafe(audit->failure_confirmation) << "\n";
    }
  }
  const auto& wave = c.document.at("certified").at("wave");
  if (!wave.is_null()) {
    out << " wave " << TerminalSafe(wave.at("name").get<std::string>()) << " (ledger entry "
        << wave.at("entry").get<uint64_t>() << "): " << (wave.at("pass").get<bool>() ? "pass" : "fail") << ", "
        << wave.at("members").size() << " member session(s)\n";
    out << "   statement: " << TerminalSafe(wave.at("statement").get<std::string>()) << "\n";
  }
  const ExportVerification& doc = c.audit.document;
  out << "evidence: " << doc.verified_entries
      << " entries, each verified against its signed envelope on its own (the chain is not: the entries are not "
         "shown to be the whole ledger); signed head entry "
      << doc.head.sequence << " recorded " << FormatUnixMicrosUtc(doc.head.recorded_at_unix_us) << "; schema "
      << kWipeSchemaFile << " sha256 " << c.audit.schema_sha256 << " (this build's)\n";
  out << "trust: authority key " << KeyId(trust.authority) << " and challenger key " << KeyId(trust.challenger)
      << " as pinned; node keys as the orders name them\n";
  out << "certificate: OK: every byte of it is what its signed records make it\n";
}

}  // namespace

int RunWriteCertificate(const Ledger& ledger, const CertificateRequest& request, const CertificateTrust& trust,
                        const std::string& out_path, std::ostream& out, std::ostream& err) {
  constexpr char kWhat[] = "wipeproof-challenger ledger certificate: ";
  auto certificate = WriteCertificate(ledger, request, trust);
  if (!certificate.ok()) {
    err << kWhat << CliErrorText(certificate.status()) << "\n";
    return CliExitCodeFor(certificate.status());
  }
  if (out_path.empty()) {
    out << certificate->text;
    return kExitOk;
  }
  Status written = RefuseOutputOverInput(out_path, ledger.path(), "the ledger (--ledger)");
  if (written.ok()) written = WriteFileReplacing(out_path, certificate->text);
  if (!written.ok()) {
    err << kWhat << CliErrorText(written) << "\n";
    return CliExitCodeFor(written);
  }
  const auto& sessions = certificate->document.at("certified").at("sessions");
  err << kWhat << "wrote the certificate of " << TerminalSafe(certificate->subject) << " ("
      << (sessions.size() == 1 ? TerminalSafe(sessions[0].at("node").get<std::string>()) + ": "
                               : std::to_string(sessions.size()) + " sessions: ")
      << certificate->result << ") to " << out_path << "\n";
  return kExitOk;
}

int RunVerifyCertificate(const std::string& path, const CertificateTrust& trust, std::ostream& out, std::ostream& err) {
  constexpr char kWhat[] = "wipeproof-challenger ledger audit: ";
  auto text = ReadTextFile(path, kMaxCertificateFileBytes, "the largest certificate read");
  if (!text.ok()) {
    err << kWhat << CliErrorText(text.status()) << "\n";
    return kExitUsage;
  }
  auto certificate = VerifyCertificate(*text, trust);
  if (!certificate.ok()) {
    out << "certificate " << path << ": FAILED: " << CliErrorText(certificate.status()) << "\n";
    err << kWhat << "certificate " << path << ": " << CliErrorText(certificate.status()) << "\n";
    return kExitFailed;
  }
  out << "certificate " << path << ": OK: " << TerminalSafe(certificate->subject) << ": " << certificate->result
      << "\n";
  PrintVerified(*certificate, trust, out);
  return kExitOk;
}

}  // namespace wipeproof
