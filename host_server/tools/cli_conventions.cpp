#include "host_server/tools/cli_conventions.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "sdk/version.h"

namespace fedstat {
namespace tools {

std::string version_line(const std::string& tool) {
  return tool + " " + FEDSTAT_VERSION_STRING;
}

void apply_conventions(CLI::App& app, const std::string& tool,
                       const std::vector<std::string>& examples, const ExitCodes& exit_codes) {
  app.name(tool);  // the usage line says "fedstat-tv", not the path it was started by
  app.set_version_flag("--version", version_line(tool), "print the version and exit");
  std::string footer = "\nExamples:\n";
  for (const std::string& example : examples) footer += "  " + example + "\n";
  // The common codes, each replaced by the tool's own wording where it gives one.
  std::map<int, std::string> codes = {
      {kExitDone, "done"},
      {kExitRefused, "the input or the run was refused (the reason is on stderr)"},
      {kExitUsage, "the command line was wrong (see --help)"}};
  for (const auto& [code, meaning] : exit_codes) codes[code] = meaning;
  footer += "\nExit status:\n";
  for (const auto& [code, meaning] : codes) {
    footer += "  " + std::to_string(code) + "  " + meaning + "\n";
  }
  footer += "\nDocumentation: docs/cli.md";
  app.footer(footer);
}

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    // --help and --version (also a subcommand's --help): CLI11 prints them on stdout, code 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    // CLI11 checks the values and the required options before it looks at what it could not
    // place, so a misspelt option ("--sed 1") would be reported as the option it meant being
    // missing ("--seed is required"). What it could not place is named first, in command-line
    // order (CLI11's own message lists it backwards): it is the likelier cause of any other error.
    const std::vector<std::string> unknown = app.remaining(true);
    std::string reason = e.what();
    if (!unknown.empty()) {
      reason = unknown.size() > 1 ? "The following arguments were not expected:"
                                  : "The following argument was not expected:";
      for (const std::string& argument : unknown) reason += " " + argument;
    }
    std::fprintf(stderr, "%s: %s\nRun with --help for the options and examples.\n",
                 app.get_name().c_str(), reason.c_str());
    return kExitUsage;
  }
}

}  // namespace tools
}  // namespace fedstat
