#include "maskgat/mpi/communicator.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "maskgat/core/error.hpp"

namespace maskgat::mpi {
namespace {

// The most bytes one message carries (MPI counts are ints); larger buffers go as several.
constexpr std::size_t kMessageBytes = std::size_t{1} << 30;
// Polls of a wait before it starts sleeping between polls, and the sleep.
constexpr int kBusyPolls = 2000;
constexpr auto kPollSleep = std::chrono::microseconds(50);

// Throws `Error` naming `call` and `rank` (when known, >= 0) when an MPI call did not succeed.
void check(int status, const char* call, int rank) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw Error(std::string("mpi: ") + (rank >= 0 ? "rank " + std::to_string(rank) + ": " : "") +
              call + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

std::string thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "level " + std::to_string(level);
  }
}

// Throws unless MPI provides at least MPI_THREAD_FUNNELED and, at exactly that level, this is
// MPI's main thread.
void check_thread_level() {
  int provided = MPI_THREAD_SINGLE;
  check(MPI_Query_thread(&provided), "MPI_Query_thread", -1);
  if (provided < MPI_THREAD_FUNNELED) {
    throw InvalidArgument("mpi: MPI provides " + thread_level_name(provided) +
                          ", MaskGAT needs at least MPI_THREAD_FUNNELED (initialise MPI with "
                          "MPI_Init_thread, or with maskgat::mpi::Environment)");
  }
  if (provided == MPI_THREAD_FUNNELED) {
    int main = 0;
    check(MPI_Is_thread_main(&main), "MPI_Is_thread_main", -1);
    if (main == 0) {
      throw InvalidArgument(
          "mpi: MPI provides MPI_THREAD_FUNNELED, so only the thread that initialised it may "
          "call MPI; this communicator was created on another thread");
    }
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm, CommunicatorOptions options) : options_(options) {
  int initialised = 0;
  int finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (initialised == 0 || finalised != 0) {
    throw InvalidArgument(
        "mpi: MPI is not initialised (call MPI_Init_thread, or create a maskgat::mpi::Environment, "
        "before the communicator)");
  }
  if (options.timeout.count() < 0) {
    throw InvalidArgument("mpi: the timeout must be at least 0 ms (0 waits for ever), got " +
                          std::to_string(options.timeout.count()));
  }
  check_thread_level();
  check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup", -1);
  // Errors come back as codes (and are thrown) on this duplicate only; the program's own
  // communicator keeps its handler.
  check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", -1);
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank", -1);
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size", rank_);
  int* limit = nullptr;
  int found = 0;
  check(MPI_Comm_get_attr(comm_, MPI_TAG_UB, static_cast<void*>(&limit), &found),
        "MPI_Comm_get_attr", rank_);
  if (found != 0 && limit != nullptr) tag_limit_ = *limit;
}

MpiCommunicator::~MpiCommunicator() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (finalised == 0 && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiCommunicator::check_usable(const char* call) const {
  if (failed_) {
    throw Error(std::string("mpi: rank ") + std::to_string(rank_) + ": " + call +
                " after an earlier call failed; end the job (maskgat::mpi::abort)");
  }
}

void MpiCommunicator::wait(std::span<MPI_Request> requests, std::span<const int> peers,
                           const char* call) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<int> done(requests.size());
  for (int polls = 0;;) {
    int completed = 0;
    check(MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &completed, done.data(),
                       MPI_STATUSES_IGNORE),
          call, rank_);
    if (completed == MPI_UNDEFINED) return;  // every request done
    if (completed > 0) polls = 0;
    if (options_.timeout.count() > 0 && std::chrono::steady_clock::now() - start >
                                            std::chrono::duration<double>(options_.timeout)) {
      std::set<int> late;
      for (std::size_t k = 0; k < requests.size(); ++k) {
        if (requests[k] != MPI_REQUEST_NULL) late.insert(peers[k]);
      }
      std::string names;
      for (const int peer : late) names += (names.empty() ? "" : ", ") + std::to_string(peer);
      char waited[32];
      std::snprintf(waited, sizeof waited, "%.1f", seconds_since(start));
      throw Error("mpi: rank " + std::to_string(rank_) + " waited " + waited + " s in " + call +
                  " (call " + std::to_string(calls_) + ") for rank" +
                  (late.size() == 1 ? " " : "s ") + names +
                  ", which did not answer: stopped, hung or dead (the timeout is " +
                  std::to_string(options_.timeout.count()) + " ms)");
    }
    if (polls < kBusyPolls) {
      ++polls;
    } else {
      std::this_thread::sleep_for(kPollSleep);
    }
  }
}

void MpiCommunicator::exchange(std::span<const std::span<const std::byte>> send,
                               std::span<const std::span<std::byte>> receive) {
  check_usable("exchange");
  const auto ranks = static_cast<std::size_t>(size_);
  if (send.size() != ranks || receive.size() != ranks) {
    throw InvalidArgument("mpi: exchange needs one send and one receive buffer per rank, got " +
                          std::to_string(send.size()) + " and " + std::to_string(receive.size()) +
                          " for " + std::to_string(ranks) + " ranks");
  }
  const auto start = std::chrono::steady_clock::now();
  ++calls_;
  const int tag = 1 + static_cast<int>(calls_ % tag_limit_);
  std::vector<MPI_Request> requests;
  std::vector<int> peers;
  requests.reserve(2 * ranks);
  peers.reserve(2 * ranks);
  std::int64_t sent = 0;
  failed_ = true;                         // until the exchange completes
  for (int pass = 0; pass < 2; ++pass) {  // receives first, then sends
    for (std::size_t q = 0; q < ranks; ++q) {
      if (static_cast<int>(q) == rank_) continue;
      const int peer = static_cast<int>(q);
      const std::size_t bytes = pass == 0 ? receive[q].size() : send[q].size();
      for (std::size_t offset = 0; offset < bytes; offset += kMessageBytes) {
        const int length = static_cast<int>(std::min(kMessageBytes, bytes - offset));
        requests.emplace_back();
        peers.push_back(peer);
        if (pass == 0) {
          check(MPI_Irecv(receive[q].data() + offset, length, MPI_BYTE, peer, tag, comm_,
                          &requests.back()),
                "MPI_Irecv", rank_);
        } else {
          check(MPI_Isend(send[q].data() + offset, length, MPI_BYTE, peer, tag, comm_,
                          &requests.back()),
                "MPI_Isend", rank_);
        }
      }
      if (pass == 1) sent += static_cast<std::int64_t>(bytes);
    }
  }
  wait(requests, peers, "exchange");
  failed_ = false;
  count(sent, seconds_since(start));
}

void MpiCommunicator::all_gather(std::span<const std::byte> mine, std::span<std::byte> all) {
  const auto ranks = static_cast<std::size_t>(size_);
  if (all.size() != mine.size() * ranks) {
    throw InvalidArgument("mpi: all_gather of " + std::to_string(mine.size()) + " bytes into " +
                          std::to_string(all.size()) + ", expected " +
                          std::to_string(mine.size() * ranks));
  }
  std::vector<std::span<const std::byte>> send(ranks, mine);
  std::vector<std::span<std::byte>> receive(ranks);
  for (std::size_t q = 0; q < ranks; ++q) receive[q] = all.subspan(q * mine.size(), mine.size());
  exchange(send, receive);
  std::copy(mine.begin(), mine.end(), receive[static_cast<std::size_t>(rank_)].begin());
}

Environment::Environment(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised != 0) {
    throw InvalidArgument(
        "mpi: MPI is already initialised; a maskgat::mpi::Environment initialises it "
        "once per process");
  }
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw Error("mpi: MPI_Init_thread failed");
  }
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw InvalidArgument("mpi: MPI provides " + thread_level_name(provided) +
                          ", MaskGAT needs at least MPI_THREAD_FUNNELED");
  }
}

Environment::~Environment() { MPI_Finalize(); }

void abort(MPI_Comm comm, int code) {
  std::cout.flush();
  std::cerr.flush();
  MPI_Abort(comm, code);
  std::_Exit(code);  // MPI_Abort does not return; this is its net
}

}  // namespace maskgat::mpi
