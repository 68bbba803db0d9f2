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

# Static executables: Debian 12's qemu-aarch64 (7.2) hangs inside pthread_create for every
# dynamically linked guest (seen with a 5-line C program, any -cpu, rseq disabled), while static
# guests run correctly. Static linking also makes the binaries independent of -L sysroot setup.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
