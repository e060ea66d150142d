#include "mpi_communicator.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "maskgat/core/error.hpp"

#if MASKGAT_WITH_MPI
#include <mpi.h>
#endif

namespace maskgat::app {

#if MASKGAT_WITH_MPI
namespace {

// The most bytes one message carries (MPI counts are ints); larger buffers go as several.
constexpr std::size_t kMessageBytes = std::size_t{1} << 30;

// Throws `Error` naming `call` and `rank` when an MPI call did not succeed.
void check(int status, const char* call, int rank) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw Error(std::string("mpi: rank ") + std::to_string(rank) + ": " + call +
              " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator();
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;
  ~MpiCommunicator() override { MPI_Finalize(); }

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  void exchange(std::span<const std::span<const std::byte>> send,
                std::span<const std::span<std::byte>> receive) override;
  void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) override;

 private:
  int rank_ = 0;
  int size_ = 1;
};

MpiCommunicator::MpiCommunicator() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw Error("mpi: MPI_Init_thread failed");
  }
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler",
        rank_);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank", rank_);
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size", rank_);
}

// Wall time since `start`, in seconds.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void MpiCommunicator::exchange(std::span<const std::span<const std::byte>> send,
                               std::span<const std::span<std::byte>> receive) {
  const auto start = std::chrono::steady_clock::now();
  const auto ranks = static_cast<std::size_t>(size_);
  if (send.size() != ranks || receive.size() != ranks) {
    throw InvalidArgument("mpi: exchange needs one send and one receive buffer per rank");
  }
  std::vector<MPI_Request> requests;
  const auto post = [&](std::size_t bytes, auto&& issue) {
    for (std::size_t offset = 0; offset < bytes; offset += kMessageBytes) {
      requests.emplace_back();
      issue(offset, static_cast<int>(std::min(kMessageBytes, bytes - offset)), &requests.back());
    }
  };
  requests.reserve(4 * ranks);
  std::int64_t sent = 0;
  for (std::size_t q = 0; q < ranks; ++q) {
    if (static_cast<int>(q) == rank_) continue;
    const int peer = static_cast<int>(q);
    std::byte* in = receive[q].data();
    post(receive[q].size(), [&](std::size_t offset, int length, MPI_Request* request) {
      check(MPI_Irecv(in + offset, length, MPI_BYTE, peer, 0, MPI_COMM_WORLD, request), "MPI_Irecv",
            rank_);
    });
  }
  for (std::size_t q = 0; q < ranks; ++q) {
    if (static_cast<int>(q) == rank_) continue;
    const int peer = static_cast<int>(q);
    const std::byte* out = send[q].data();
    post(send[q].size(), [&](std::size_t offset, int length, MPI_Request* request) {
      check(MPI_Isend(out + offset, length, MPI_BYTE, peer, 0, MPI_COMM_WORLD, request),
            "MPI_Isend", rank_);
    });
    sent += static_cast<std::int64_t>(send[q].size());
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall", rank_);
  count(sent, seconds_since(start));
}

void MpiCommunicator::all_gather(std::span<const std::byte> mine, std::span<std::byte> all) {
  if (all.size() != mine.size() * static_cast<std::size_t>(size_) || mine.size() > INT_MAX) {
    throw InvalidArgument("mpi: all_gather of " + std::to_string(mine.size()) + " bytes into " +
                          std::to_string(all.size()));
  }
  const auto start = std::chrono::steady_clock::now();
  check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(),
                      static_cast<int>(mine.size()), MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Allgather", rank_);
  count(static_cast<std::int64_t>(mine.size()) * (size_ - 1), seconds_since(start));
}

}  // namespace

std::unique_ptr<Communicator> start_mpi() { return std::make_unique<MpiCommunicator>(); }

void abort_mpi(int code) {
  std::cerr.flush();
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this is its net
}

#else

std::unique_ptr<Communicator> start_mpi() {
  throw InvalidArgument(
      "--partitions runs under mpirun, and this maskgat was built without MPI (install "
      "libopenmpi-dev and openmpi-bin, then configure and build again)");
}

void abort_mpi(int code) { std::_Exit(code); }

#endif

}  // namespace maskgat::app
