// The conventions every fedstat command-line tool follows, in one place (issue 16 item 5):
//   --help      what the tool does, its options, "Examples:" to copy and "Exit status:"
//   --version   "<tool> <fedstat version>" (sdk/version.h), exit 0
//   --json      one JSON object on stdout instead of the text (each tool declares its own flag)
//   exit status 0 done; 1 the input or the run was refused (the reason on stderr);
//               2 the command line was wrong (CLI11's message and "Run with --help" on stderr);
//               a tool with more codes lists them in its ExitCodes.
// Progress for long runs is progress.h. Host only (std::string, CLI11). Memory: the strings.
// Paper: none (how the tools present themselves).
#ifndef FEDSTAT_HOST_SERVER_TOOLS_CLI_CONVENTIONS_H_
#define FEDSTAT_HOST_SERVER_TOOLS_CLI_CONVENTIONS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"

namespace fedstat {
namespace tools {

inline constexpr int kExitDone = 0;
inline constexpr int kExitRefused = 1;
inline constexpr int kExitUsage = 2;

// Codes beyond 0, 1 and 2, or a tool's own wording for them: {code, meaning}.
using ExitCodes = std::vector<std::pair<int, std::string>>;

// "fedstat-tv 0.2.0": what --version prints.
std::string version_line(const std::string& tool);

// Names `app` `tool` ("fedstat-tv": the usage line, --version and the messages) and adds
// --version and a footer with the examples (whole command lines, each a complete useful run)
// and the exit status.
void apply_conventions(CLI::App& app, const std::string& tool,
                       const std::vector<std::string>& examples, const ExitCodes& exit_codes = {});

// Parses the command line. Returns nothing when the tool should go on; otherwise the code to
// exit with: 0 after --help or --version (printed on stdout), 2 after a usage error (printed on
// stderr with a pointer to --help). An unknown option or a stray argument is the error reported
// whenever there is one, before a missing required option or a bad value it may have caused.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

}  // namespace tools
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_TOOLS_CLI_CONVENTIONS_H_
