/// @file
/// Span<T>: a non-owning view of `size` contiguous T (C++17 has no std::span).
///
/// A span never owns or frees memory; it is two words and is passed by value. Sub-views
/// (first/last/subspan) clamp nothing: asking for more than the span holds returns an empty span,
/// so an out-of-bounds request can be detected instead of read.
///
/// @memory sizeof(Span<T>) = 2 words.
/// @paper none (infrastructure).
#ifndef FEDSTAT_SDK_BASE_SPAN_H_
#define FEDSTAT_SDK_BASE_SPAN_H_

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

namespace fedstat {

/// A non-owning view of `size` contiguous T: a pointer and a count, passed by value.
template <typename T>
class Span {
 public:
  /// The empty span (null data, size 0).
  constexpr Span() = default;
  /// The `size` elements starting at `data`.
  constexpr Span(T* data, size_t size) : data_(data), size_(size) {}
  /// All N elements of a C array (implicit).
  template <size_t N>
  constexpr Span(T (&array)[N]) : data_(array), size_(N) {}  // NOLINT: implicit from arrays
  /// Span<const T> from Span<T> (implicit).
  template <typename U, typename = std::enable_if_t<std::is_same<const U, T>::value>>
  constexpr Span(Span<U> other) : data_(other.data()), size_(other.size()) {}  // NOLINT

  /// Pointer to the first element (null for a default-constructed span).
  constexpr T* data() const { return data_; }
  /// Number of elements.
  constexpr size_t size() const { return size_; }
  /// Number of bytes the elements occupy (size()·sizeof(T)).
  constexpr size_t size_bytes() const { return size_ * sizeof(T); }
  /// True when the span has no elements.
  constexpr bool empty() const { return size_ == 0; }
  /// Element `i`; unchecked: `i` must be < size().
  constexpr T& operator[](size_t i) const { return data_[i]; }
  /// Iterator to the first element.
  constexpr T* begin() const { return data_; }
  /// Iterator past the last element.
  constexpr T* end() const { return data_ + size_; }

  /// The first `n` elements, or an empty span if there are fewer than `n`.
  constexpr Span first(size_t n) const { return n <= size_ ? Span(data_, n) : Span(); }
  /// The last `n` elements, or an empty span if there are fewer than `n`.
  constexpr Span last(size_t n) const { return n <= size_ ? Span(data_ + (size_ - n), n) : Span(); }
  /// `count` elements from `offset`, or an empty span if that range is not inside this span.
  constexpr Span subspan(size_t offset, size_t count) const {
    return (offset <= size_ && count <= size_ - offset) ? Span(data_ + offset, count) : Span();
  }
  /// Everything from `offset` on (empty if offset > size).
  constexpr Span subspan(size_t offset) const {
    return offset <= size_ ? Span(data_ + offset, size_ - offset) : Span();
  }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

/// A read-only view of bytes.
using ByteSpan = Span<const uint8_t>;
/// A writable view of bytes.
using MutableByteSpan = Span<uint8_t>;

/// The bytes of a span's elements, read-only (trivially copyable T only, checked at compile
/// time).
template <typename T>
ByteSpan as_bytes(Span<T> s) {
  static_assert(std::is_trivially_copyable<std::remove_const_t<T>>::value,
                "trivially copyable only");
  return ByteSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size_bytes());
}
/// The bytes of a span's elements, writable (non-const, trivially copyable T only, checked at
/// compile time).
template <typename T>
MutableByteSpan as_writable_bytes(Span<T> s) {
  static_assert(!std::is_const<T>::value, "cannot write through a const span");
  static_assert(std::is_trivially_copyable<T>::value, "trivially copyable only");
  return MutableByteSpan(reinterpret_cast<uint8_t*>(s.data()), s.size_bytes());
}

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_SPAN_H_
