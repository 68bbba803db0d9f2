#include "host_server/tools/cli_conventions.h"

#include <cstdio>

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
  footer +=
      "\nExit status:\n"
      "  0  done\n";
  bool has_1 = false, has_2 = false;
  for (const auto& [code, meaning] : exit_codes) {
    has_1 = has_1 || code == kExitRefused;
    has_2 = has_2 || code == kExitUsage;
  }
  if (!has_1) footer += "  1  the input or the run was refused (the reason is on stderr)\n";
  if (!has_2) footer += "  2  the command line was wrong (see --help)\n";
  for (const auto& [code, meaning] : exit_codes) {
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
    std::fprintf(stderr, "%s: %s\nRun with --help for the options and examples.\n",
                 app.get_name().c_str(), e.what());
    return kExitUsage;
  }
}

}  // namespace tools
}  // namespace fedstat
