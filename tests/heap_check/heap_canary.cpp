// Deliberately breaks the SDK's no-heap rule so that tests can prove the heap check fires.
// Never linked into anything: the tests only run the checker on this archive.
#include <cstdlib>
#include <stdexcept>

// The pointers escape through these globals, so the compiler cannot delete the allocations.
int* g_canary_new = nullptr;
void* g_canary_malloc = nullptr;

void canary_allocate() {
  g_canary_new = new int(42);
  g_canary_malloc = std::malloc(16);
}

void canary_throw(int x) {
  if (x < 0) throw std::runtime_error("canary");
}
