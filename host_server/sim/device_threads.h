// DeviceThreads: one thread per emulated device with a small stack of its own size (pthreads),
// so a fleet of 1,000 device threads reserves 1,000 × stack_bytes of address space instead of
// 1,000 × the 8 MiB default. A device's stack holds its Client (~3 KiB), its TlsPskChannel
// (~3 KiB) and mbedTLS's handshake frames; 256 KiB leaves ample room. Host only.
// Errors: start() throws std::runtime_error when a thread cannot be created (the ones already
// started are joined first). Memory: the stacks, touched pages only. Paper: none (emulation).
#ifndef FEDSTAT_HOST_SIM_DEVICE_THREADS_H_
#define FEDSTAT_HOST_SIM_DEVICE_THREADS_H_

#include <pthread.h>

#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fedstat {
namespace host {

class DeviceThreads {
 public:
  static constexpr size_t kDefaultStackBytes = 256u << 10;

  explicit DeviceThreads(size_t stack_bytes = kDefaultStackBytes) : stack_bytes_(stack_bytes) {}
  ~DeviceThreads() { join(); }
  DeviceThreads(const DeviceThreads&) = delete;
  DeviceThreads& operator=(const DeviceThreads&) = delete;

  // Runs body(0), ..., body(count − 1), each on a thread of its own.
  void start(size_t count, const std::function<void(size_t)>& body) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, stack_bytes_);
    for (size_t i = 0; i < count; ++i) {
      auto task = std::make_unique<Task>(Task{body, i});
      pthread_t thread;
      const int rc = pthread_create(&thread, &attr, &DeviceThreads::run, task.get());
      if (rc != 0) {
        pthread_attr_destroy(&attr);
        join();
        throw std::runtime_error("device thread " + std::to_string(i) +
                                 ": pthread_create failed: " + std::strerror(rc));
      }
      task.release();  // run() owns it now
      threads_.push_back(thread);
    }
    pthread_attr_destroy(&attr);
  }

  void join() {
    for (pthread_t thread : threads_) pthread_join(thread, nullptr);
    threads_.clear();
  }

 private:
  struct Task {
    std::function<void(size_t)> body;
    size_t index;
  };
  static void* run(void* argument) {
    const std::unique_ptr<Task> task(static_cast<Task*>(argument));
    task->body(task->index);  // the body catches its own exceptions (a throw here terminates)
    return nullptr;
  }

  size_t stack_bytes_;
  std::vector<pthread_t> threads_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SIM_DEVICE_THREADS_H_
