# AArch64 Linux (phone-like) cross build with Debian's g++-aarch64-linux-gnu; programs run under
# qemu-aarch64 (user mode) through CMAKE_CROSSCOMPILING_EMULATOR, so CTest runs the unit tests.
# Libraries (GoogleTest, mbedTLS) come from Debian's multiarch :arm64 packages.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
