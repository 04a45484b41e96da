#pragma once
// A rank group and its twins: the same group in every other replica and TP rank of a plan, which
// runs the same collective at the same time (the representative first). Stored flat, one
// allocation for all of them: a 16K-GPU plan's pipeline transfers have 1,024 twins per stage pair
// and its tensor-parallel groups 2,048.
#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

namespace parasim::workload {

class Twins {
 public:
  Twins() = default;
  /// The representative alone.
  explicit Twins(std::span<const int> representative) : group_size_(representative.size()), count_(1) {
    ranks_.assign(representative.begin(), representative.end());
  }
  /// Groups of one size, the representative first.
  explicit Twins(const std::vector<std::vector<int>>& groups) {
    for (const auto& g : groups) add(g);
  }

  /// Appends a twin, as many ranks as the representative.
  void add(std::span<const int> twin) {
    if (count_ == 0) group_size_ = twin.size();
    if (twin.size() != group_size_) throw std::logic_error("twin groups differ in size");
    ranks_.insert(ranks_.end(), twin.begin(), twin.end());
    ++count_;
  }
  void reserve(std::size_t groups) { ranks_.reserve(groups * group_size_); }

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::size_t group_size() const { return group_size_; }
  std::span<const int> operator[](std::size_t i) const { return {ranks_.data() + i * group_size_, group_size_}; }
  std::span<const int> front() const { return (*this)[0]; }
  /// Every group as its own vector (tests and reports).
  std::vector<std::vector<int>> groups() const {
    std::vector<std::vector<int>> out;
    for (std::size_t i = 0; i < count_; ++i) out.emplace_back((*this)[i].begin(), (*this)[i].end());
    return out;
  }

  class iterator {
   public:
    iterator(const Twins* twins, std::size_t i) : twins_(twins), i_(i) {}
    std::span<const int> operator*() const { return (*twins_)[i_]; }
    iterator& operator++() { ++i_; return *this; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
   private:
    const Twins* twins_;
    std::size_t i_;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, count_}; }

 private:
  std::vector<int> ranks_;
  std::size_t group_size_ = 0, count_ = 0;
};

}  // namespace parasim::workload
