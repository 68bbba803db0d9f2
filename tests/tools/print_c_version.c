/* Prints the C ABI's fedstat_version() (tests/tools/version_agreement_test.cmake compares it with
 * the CMake project version, every tool's --version and the Python module's __version__). */
#include <stdio.h>

#include "fedstat/fedstat.h"

int main(void) {
  printf("%s\n", fedstat_version());
  return 0;
}
