// fedstat-server: the host half of fedstat. For now it answers --version and --help; collecting,
// aggregating and unmasking reports are the server issue's work.
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "sdk/version.h"
#include "sdk/wire/envelope_codec.h"

int main(int argc, char** argv) {
  CLI::App app{
      "fedstat-server: collects fedstat devices' encoded reports, aggregates and unmasks them, "
      "and computes the estimates.\nThis build implements --version and --help only."};
  app.set_version_flag("--version", std::string("fedstat-server ") + FEDSTAT_VERSION_STRING +
                                        " (wire protocol " +
                                        std::to_string(fedstat::wire::kProtocolVersion) + ")");
  CLI11_PARSE(app, argc, argv);
  std::fprintf(stderr, "fedstat-server %s: serving is not implemented in this build yet\n",
               FEDSTAT_VERSION_STRING);
  return 1;
}
