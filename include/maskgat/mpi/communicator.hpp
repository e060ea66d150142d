#pragma once
/// @file
/// The `Communicator` of distributed training over MPI: the optional `maskgat::mpi` component
/// (`find_package(maskgat COMPONENTS mpi)`, pkg-config `maskgat-mpi`). The rest of the library
/// does not use MPI.

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <span>

#include "maskgat/core/communicator.hpp"
#include "maskgat/mpi/export.hpp"

namespace maskgat::mpi {

/// How an `MpiCommunicator` waits.
struct CommunicatorOptions {
  /// How long one call waits for the other ranks before it gives up with an `Error` that names
  /// the ranks that did not answer (stopped, hung or in an endless loop); zero waits for ever.
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
};

/// A `Communicator` over a duplicate of an MPI communicator: its messages never match the
/// program's own, and every call uses a tag of its own. Only the thread that created it may call
/// it (MPI must provide at least `MPI_THREAD_FUNNELED`, which `Environment` asks for); the
/// library's TBB workers never call MPI. After an `Error` (a failed MPI call, or a timeout) the
/// communicator refuses further calls: end the job with `abort`.
class MASKGAT_MPI_EXPORT MpiCommunicator final : public Communicator {
 public:
  /// Duplicates `comm` (`MPI_Comm_dup`, collective over `comm`).
  /// @param comm    any intra-communicator of an initialised MPI, e.g. `MPI_COMM_WORLD`
  /// @param options how calls wait
  /// @throws InvalidArgument when MPI is not initialised, or provides less than
  ///         `MPI_THREAD_FUNNELED`, or this is not MPI's main thread under `MPI_THREAD_FUNNELED`;
  ///         Error when an MPI call fails
  explicit MpiCommunicator(MPI_Comm comm, CommunicatorOptions options = {});
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;
  /// Frees the duplicate.
  ~MpiCommunicator() override;

  /// This process's rank in the communicator.
  /// @return in [0, size())
  [[nodiscard]] int rank() const override { return rank_; }
  /// The number of processes of the communicator.
  /// @return at least 1
  [[nodiscard]] int size() const override { return size_; }
  /// See `Communicator::exchange`; nonblocking sends and receives with this call's tag.
  /// @param send    size() buffers to send
  /// @param receive size() buffers to fill
  /// @throws Error naming the call, the rank and the ranks that did not answer within the timeout
  void exchange(std::span<const std::span<const std::byte>> send,
                std::span<const std::span<std::byte>> receive) override;
  /// See `Communicator::all_gather`: `mine` sent to every other rank.
  /// @param mine the same number of bytes on every rank
  /// @param all  size() x mine.size() bytes
  /// @throws InvalidArgument on mismatched sizes; Error as `exchange`
  void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) override;

  /// The duplicate this communicator sends on.
  /// @return an MPI communicator owned by this object
  [[nodiscard]] MPI_Comm handle() const noexcept { return comm_; }

 private:
  // Waits for `requests`, the request k exchanging with rank `peers[k]`, within the timeout.
  void wait(std::span<MPI_Request> requests, std::span<const int> peers, const char* call);
  // Throws when an earlier call failed.
  void check_usable(const char* call) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  CommunicatorOptions options_;
  int rank_ = 0;
  int size_ = 1;
  int tag_limit_ = 32767;   // MPI_TAG_UB of the communicator
  std::int64_t calls_ = 0;  // calls made, for the tags and the messages
  bool failed_ = false;     // an earlier call threw
};

/// MPI for a program that does not initialise it itself: `MPI_Init_thread` asking for
/// `MPI_THREAD_FUNNELED` on construction (and checking that MPI provides it), `MPI_Finalize` on
/// destruction. At most one per process.
class MASKGAT_MPI_EXPORT Environment {
 public:
  /// Initialises MPI.
  /// @param argc, argv the program's arguments, or null
  /// @throws InvalidArgument when MPI is already initialised or provides less than
  ///         `MPI_THREAD_FUNNELED`; Error when `MPI_Init_thread` fails
  Environment(int* argc, char*** argv);
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  /// Finalises MPI.
  ~Environment();
};

/// Ends every process of `comm`'s job with `code` (`MPI_Abort`), after flushing the standard
/// streams: what a program does when one rank fails, so that no rank waits for it.
/// @param comm the job's communicator
/// @param code the exit code
[[noreturn]] MASKGAT_MPI_EXPORT void abort(MPI_Comm comm, int code);

}  // namespace maskgat::mpi
