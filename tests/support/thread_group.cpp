#include "support/thread_group.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "maskgat/core/error.hpp"

namespace maskgat::test {

// One rank: posts what it sends in the group's mailboxes, waits for every rank to have posted,
// takes what it receives, and waits again before the mailboxes are reused.
class ThreadGroup::Member final : public Communicator {
 public:
  Member(ThreadGroup& group, int rank) : group_(&group), rank_(rank) {}

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return group_->size_; }

  void exchange(std::span<const std::span<const std::byte>> send,
                std::span<const std::span<std::byte>> receive) override {
    const auto ranks = static_cast<std::size_t>(group_->size_);
    const auto me = static_cast<std::size_t>(rank_);
    for (std::size_t q = 0; q < ranks; ++q) {
      if (q == me) continue;
      group_->mailboxes_[me * ranks + q].assign(send[q].begin(), send[q].end());
      count(static_cast<std::int64_t>(send[q].size()), 0.0);
    }
    group_->barrier_.arrive_and_wait();
    for (std::size_t q = 0; q < ranks; ++q) {
      if (q == me) continue;
      const std::vector<std::byte>& box = group_->mailboxes_[q * ranks + me];
      if (box.size() != receive[q].size()) {
        throw Error("thread group: rank " + std::to_string(q) + " sent " +
                    std::to_string(box.size()) + " bytes, rank " + std::to_string(me) +
                    " expected " + std::to_string(receive[q].size()));
      }
      std::copy(box.begin(), box.end(), receive[q].begin());
    }
    group_->barrier_.arrive_and_wait();
  }

  void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) override {
    const auto ranks = static_cast<std::size_t>(group_->size_);
    const auto me = static_cast<std::size_t>(rank_);
    group_->mailboxes_[me * ranks + me].assign(mine.begin(), mine.end());
    group_->barrier_.arrive_and_wait();
    for (std::size_t q = 0; q < ranks; ++q) {
      const std::vector<std::byte>& box = group_->mailboxes_[q * ranks + q];
      if (box.size() * ranks != all.size()) {
        throw Error("thread group: all_gather of unequal sizes");
      }
      std::copy(box.begin(), box.end(), all.begin() + static_cast<std::ptrdiff_t>(q * box.size()));
    }
    count(static_cast<std::int64_t>(mine.size() * (ranks - 1)), 0.0);
    group_->barrier_.arrive_and_wait();
  }

 private:
  ThreadGroup* group_;
  int rank_;
};

ThreadGroup::ThreadGroup(int size)
    : size_(size),
      barrier_(size),
      mailboxes_(static_cast<std::size_t>(size) * static_cast<std::size_t>(size)) {
  for (int rank = 0; rank < size; ++rank) members_.push_back(std::make_unique<Member>(*this, rank));
}

ThreadGroup::~ThreadGroup() = default;

void ThreadGroup::run(const std::function<void(int, Communicator&)>& body) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size_; ++rank) {
    threads.emplace_back([this, rank, &body] {
      try {
        body(rank, *members_[static_cast<std::size_t>(rank)]);
      } catch (...) {
        {
          const std::lock_guard lock(failure_mutex_);
          if (!failure_) failure_ = std::current_exception();
        }
        barrier_.arrive_and_drop();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  if (failure_) std::rethrow_exception(failure_);
}

}  // namespace maskgat::test
