#include "tests/nccl_double/src/mpi_transport.h"

#include "tests/nccl_double/src/errors.h"

#include <climits>
#include <cstdlib>
#include <vector>

namespace collcheck::nccl_double {

ncclResult_t mpiFailure(int code, const std::string &during) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (PMPI_Error_string(code, text, &length) != MPI_SUCCESS)
    length = 0;
  int errorClass = MPI_ERR_OTHER;
  PMPI_Error_class(code, &errorClass);
  const ncclResult_t result = errorClass == MPI_ERR_TRUNCATE ? ncclInvalidUsage : ncclSystemError;
  std::string message = during + ": " + std::string(text, std::size_t(length));
  if (errorClass == MPI_ERR_TRUNCATE)
    message += " (a peer sent more than this rank expected: mismatched count, datatype or "
               "operation across ranks)";
  return fail(result, message);
}

ncclResult_t ensureMpiInitialized() {
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (finalized)
    return fail(ncclSystemError, "MPI is already finalized: the test double moves its data over "
                                 "MPI and cannot run after MPI_Finalize");
  int initialized = 0;
  PMPI_Initialized(&initialized);
  if (initialized)
    return ncclSuccess;
  int provided = 0;
  if (int code = PMPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
      code != MPI_SUCCESS)
    return mpiFailure(code, "initializing MPI for the test double");
  info("initialized MPI itself (the application had not)");
  std::atexit([] {
    int done = 0;
    PMPI_Finalized(&done);
    if (!done)
      PMPI_Finalize();
  });
  return ncclSuccess;
}

namespace {

// Every message of the private communicator uses this tag: the order of posting is the order of
// matching, which is NCCL's rule for sends and receives between two ranks.
constexpr int kDataTag = 0;

class MpiPosted final : public PostedTransfers {
public:
  MpiPosted(MPI_Comm comm, std::vector<Transfer> transfers)
      : comm_(comm), transfers_(std::move(transfers)) {}
  // A phase abandoned after an error: its other receives must not land in freed staging.
  ~MpiPosted() override {
    for (MPI_Request &request : requests_)
      if (request != MPI_REQUEST_NULL) {
        PMPI_Cancel(&request);
        PMPI_Request_free(&request);
      }
  }

  ncclResult_t start() {
    requests_.assign(transfers_.size(), MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < transfers_.size(); ++i) {
      const Transfer &transfer = transfers_[i];
      const int bytes = int(transfer.bytes);
      const int code = transfer.direction == Transfer::Direction::send
                           ? PMPI_Isend(transfer.buffer, bytes, MPI_BYTE, transfer.peer, kDataTag,
                                        comm_, &requests_[i])
                           : PMPI_Irecv(transfer.buffer, bytes, MPI_BYTE, transfer.peer, kDataTag,
                                        comm_, &requests_[i]);
      if (code != MPI_SUCCESS)
        return mpiFailure(code, "posting a transfer with rank " + std::to_string(transfer.peer));
    }
    return ncclSuccess;
  }

  ncclResult_t test(bool &done) override {
    std::vector<MPI_Status> statuses(requests_.size());
    int flag = 0;
    const int code = PMPI_Testall(int(requests_.size()), requests_.data(), &flag, statuses.data());
    if (code == MPI_ERR_IN_STATUS) {
      for (std::size_t i = 0; i < statuses.size(); ++i)
        if (statuses[i].MPI_ERROR != MPI_SUCCESS && statuses[i].MPI_ERROR != MPI_ERR_PENDING)
          return mpiFailure(statuses[i].MPI_ERROR,
                            "transfer with rank " + std::to_string(transfers_[i].peer));
    }
    if (code != MPI_SUCCESS)
      return mpiFailure(code, "testing transfers");
    done = flag != 0;
    if (!done)
      return ncclSuccess;
    for (std::size_t i = 0; i < transfers_.size(); ++i) {
      if (transfers_[i].direction != Transfer::Direction::receive)
        continue;
      int received = 0;
      PMPI_Get_count(&statuses[i], MPI_BYTE, &received);
      if (std::size_t(received) != transfers_[i].bytes)
        return fail(ncclInvalidUsage,
                    "received " + std::to_string(received) + " bytes from rank " +
                        std::to_string(transfers_[i].peer) + " where " +
                        std::to_string(transfers_[i].bytes) +
                        " were expected (mismatched count, datatype or operation across ranks)");
    }
    return ncclSuccess;
  }

private:
  MPI_Comm comm_;
  std::vector<Transfer> transfers_;
  std::vector<MPI_Request> requests_;
};

class MpiTransport final : public Transport {
public:
  explicit MpiTransport(MPI_Comm comm) : comm_(comm) {
    PMPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  ~MpiTransport() override {
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (!finalized)
      PMPI_Comm_free(&comm_);
  }

  ncclResult_t post(std::span<const Transfer> transfers,
                    std::unique_ptr<PostedTransfers> &posted) override {
    for (const Transfer &transfer : transfers)
      if (transfer.bytes > std::size_t(INT_MAX))
        return fail(ncclInvalidArgument,
                    "the test double moves at most 2 GiB per message; split the operation");
    auto mpiPosted =
        std::make_unique<MpiPosted>(comm_, std::vector(transfers.begin(), transfers.end()));
    NCCL_DOUBLE_CHECK(mpiPosted->start());
    posted = std::move(mpiPosted);
    return ncclSuccess;
  }

  ncclResult_t split(std::span<const SplitRequest> requests, int myRank, int,
                     std::unique_ptr<Transport> &child) override {
    child.reset();
    const SplitRequest &mine = requests[std::size_t(myRank)];
    MPI_Comm newComm = MPI_COMM_NULL;
    // MPI orders a split's members by key, then by rank in the parent: NCCL's order too.
    if (int code =
            PMPI_Comm_split(comm_, mine.color < 0 ? MPI_UNDEFINED : mine.color, mine.key, &newComm);
        code != MPI_SUCCESS)
      return mpiFailure(code, "splitting the communicator");
    if (newComm != MPI_COMM_NULL)
      child = std::make_unique<MpiTransport>(newComm);
    return ncclSuccess;
  }

  std::string describe() const override {
    int rank = 0, size = 0;
    PMPI_Comm_rank(comm_, &rank);
    PMPI_Comm_size(comm_, &size);
    return "rank " + std::to_string(rank) + " of " + std::to_string(size) + " MPI processes";
  }

private:
  MPI_Comm comm_;
};

} // namespace

std::unique_ptr<Transport> makeMpiTransport(MPI_Comm privateComm) {
  return std::make_unique<MpiTransport>(privateComm);
}

} // namespace collcheck::nccl_double
