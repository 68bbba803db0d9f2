/* The Rust test's entry point: the C++ driver links it with the Rust static library
 * (reports.rs) and libfedstat_c.a. Usage: fedstat_cabi_rust <scratch directory>. */
#include <stdio.h>

int fedstat_rust_reports_main(const char* directory);

int main(int argc, char** argv) {
  if (argc != 2) {
    printf("usage: %s <scratch directory>\n", argv[0]);
    return 2;
  }
  return fedstat_rust_reports_main(argv[1]);
}
