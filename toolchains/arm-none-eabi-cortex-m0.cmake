# Cortex-M0 bare metal (ARMv6-M: Thumb-1, no FPU, no 64-bit multiply instruction — GCC calls
# __aeabi_lmul — and no hardware divide), newlib-nano, with Debian's gcc-arm-none-eabi.
# The core self-test runs on QEMU's micro:bit board model (nRF51822: 256 KiB flash, 16 KiB RAM)
# with semihosting for output and the exit status (tests/cross/CMakeLists.txt).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m0)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(FEDSTAT_PLATFORM baremetal CACHE STRING "" FORCE)

set(_fedstat_cpu_flags "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft")
set(CMAKE_C_FLAGS_INIT "${_fedstat_cpu_flags} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_fedstat_cpu_flags} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti")
set(CMAKE_ASM_FLAGS_INIT "${_fedstat_cpu_flags}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_fedstat_cpu_flags} --specs=nano.specs -Wl,--gc-sections")
set(CMAKE_C_FLAGS_MINSIZEREL_INIT "-Os")
set(CMAKE_CXX_FLAGS_MINSIZEREL_INIT "-Os")

set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-system-arm;-M;microbit;-nographic;-monitor;none;-semihosting-config;enable=on,target=native;-kernel)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
