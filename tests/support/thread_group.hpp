#pragma once
// P communicators in one process, one per thread: MPI's stand-in for tests of distributed training
// that the sanitizers watch (tests/distributed runs the real thing under mpirun).

#include <barrier>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "maskgat/core/communicator.hpp"

namespace maskgat::test {

class ThreadGroup {
 public:
  explicit ThreadGroup(int size);
  ~ThreadGroup();
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;

  // Runs `body(rank, communicator)` on `size` threads at once and joins them; rethrows the first
  // exception one of them threw (a rank that throws leaves the group, so the others do not wait
  // for it).
  void run(const std::function<void(int, Communicator&)>& body);

 private:
  class Member;
  friend class Member;
  int size_;
  std::barrier<> barrier_;
  std::vector<std::vector<std::byte>> mailboxes_;  // [from * size + to]
  std::vector<std::unique_ptr<Member>> members_;
  std::mutex failure_mutex_;
  std::exception_ptr failure_;
};

}  // namespace maskgat::test
