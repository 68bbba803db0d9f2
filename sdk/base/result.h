/// @file
/// Result<T>: either a value of T or the error Status that explains why there is none.
///
/// No heap and no exceptions: the value lives inside the Result. T must be default-constructible:
/// an error Result holds T{}, so reading the value of an error Result (a programming error, which
/// asserts in debug builds) yields T{} rather than undefined behaviour. Test ok() first, or use
/// FEDSTAT_ASSIGN_OR_RETURN.
///
/// @memory sizeof(Result<T>) = sizeof(T) + sizeof(Status) (plus alignment).
/// @paper none (infrastructure).
#ifndef FEDSTAT_SDK_BASE_RESULT_H_
#define FEDSTAT_SDK_BASE_RESULT_H_

#include <assert.h>

#include <new>
#include <type_traits>
#include <utility>

#include "sdk/base/status.h"

namespace fedstat {

/// Either a value of T or the error Status that explains why there is none; the value lives
/// inside the object (no heap). `[[nodiscard]]`: ignoring one is a compile error under -Werror.
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_reference<T>::value, "Result<T&> is not supported: use Result<T*>");
  static_assert(std::is_default_constructible<T>::value,
                "Result<T> needs a default-constructible T");

 public:
  // Implicit on purpose: `return value;` and `return some_error;` both read naturally.

  /// A successful Result holding a copy of `value`.
  Result(const T& value) : status_() { new (&storage_) T(value); }  // NOLINT
  /// A successful Result holding `value`, moved in.
  Result(T&& value) : status_() { new (&storage_) T(std::move(value)); }  // NOLINT
  /// An error Result holding T{}; an OK `error` (a programming error) becomes kInternal.
  Result(Status error) : status_(error) {  // NOLINT
    if (status_.ok()) status_ = internal_error("Result built from an OK status without a value");
    new (&storage_) T();
  }

  /// Copies the status and the value.
  Result(const Result& other) : status_(other.status_) { new (&storage_) T(other.value_ref()); }
  /// Copies the status and moves the value.
  Result(Result&& other) noexcept : status_(other.status_) {
    new (&storage_) T(std::move(other.value_ref()));
  }
  /// Copies the status and the value.
  Result& operator=(const Result& other) {
    if (this != &other) {
      status_ = other.status_;
      value_ref() = other.value_ref();
    }
    return *this;
  }
  /// Copies the status and moves the value.
  Result& operator=(Result&& other) noexcept {
    if (this != &other) {
      status_ = other.status_;
      value_ref() = std::move(other.value_ref());
    }
    return *this;
  }
  /// Destroys the value.
  ~Result() { value_ref().~T(); }

  /// True when the Result holds a value.
  bool ok() const { return status_.ok(); }
  /// kOk with a value, else the error.
  const Status& status() const { return status_; }

  /// The value; only when ok() (asserts in debug builds; T{} for an error in release builds).
  const T& value() const& {
    assert(ok() && "value() of an error Result");
    return value_ref();
  }
  /// The value, modifiable; only when ok() (asserts in debug builds).
  T& value() & {
    assert(ok() && "value() of an error Result");
    return value_ref();
  }
  /// The value, moved out of an rvalue Result; only when ok() (asserts in debug builds).
  T&& value() && {
    assert(ok() && "value() of an error Result");
    return std::move(value_ref());
  }
  /// The value when ok(), else `alternative`.
  T value_or(T alternative) const { return ok() ? value_ref() : alternative; }

  /// value().
  const T& operator*() const& { return value(); }
  /// value(), modifiable.
  T& operator*() & { return value(); }
  /// &value().
  const T* operator->() const { return &value(); }
  /// &value(), modifiable.
  T* operator->() { return &value(); }

 private:
  T& value_ref() { return *std::launder(reinterpret_cast<T*>(&storage_)); }
  const T& value_ref() const { return *std::launder(reinterpret_cast<const T*>(&storage_)); }
  Status status_;
  typename std::aligned_storage<sizeof(T), alignof(T)>::type storage_;
};

}  // namespace fedstat

/// Pastes two tokens (helper of FEDSTAT_CONCAT_; not for direct use).
#define FEDSTAT_CONCAT_INNER_(a, b) a##b
/// Pastes two tokens after expanding them (for FEDSTAT_ASSIGN_OR_RETURN's temporary's name).
#define FEDSTAT_CONCAT_(a, b) FEDSTAT_CONCAT_INNER_(a, b)
/// `FEDSTAT_ASSIGN_OR_RETURN(auto x, f());` declares/assigns x from f()'s value, or returns f()'s
/// error from the enclosing function (which must return Status or a Result). One statement that
/// expands to several: not for the body of an unbraced if or loop; at most one per line.
#define FEDSTAT_ASSIGN_OR_RETURN(lhs, expr) \
  FEDSTAT_ASSIGN_OR_RETURN_IMPL_(FEDSTAT_CONCAT_(fedstat_result_, __LINE__), lhs, expr)
/// The expansion of FEDSTAT_ASSIGN_OR_RETURN, with `tmp` the temporary's name (not for direct
/// use).
#define FEDSTAT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#endif  // FEDSTAT_SDK_BASE_RESULT_H_
