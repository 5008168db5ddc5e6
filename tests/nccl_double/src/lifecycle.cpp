// Communicator lifecycle: unique ids, init (MPI processes or ncclCommInitAll's ranks of one
// process), split, finalize, destroy, abort, the queries, and the PreMulSum operators a
// communicator owns.
#include "tests/nccl_double/src/api.h"
#include "tests/nccl_double/src/communicator.h"
#include "tests/nccl_double/src/errors.h"
#include "tests/nccl_double/src/group.h"
#include "tests/nccl_double/src/mpi_transport.h"
#include "tests/nccl_double/src/rendezvous.h"

#include <span>
#include <string>

namespace collcheck::nccl_double {
namespace {

ncclResult_t checkOutput(const char *caller, const void *output) {
  if (output == nullptr)
    return fail(ncclInvalidArgument, std::string(caller) + ": null output pointer");
  return ncclSuccess;
}

std::string describe(const ncclComm &comm) {
  return comm.transport->describe() + (comm.name.empty() ? "" : " \"" + comm.name + "\"");
}

} // namespace

ncclResult_t GetUniqueId(ncclUniqueId *uniqueId) {
  NCCL_DOUBLE_CHECK(checkOutput("ncclGetUniqueId", uniqueId));
  return generateUniqueId(uniqueId);
}

ncclResult_t CommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                ncclConfig_t *config) {
  const char *caller = "ncclCommInitRank";
  NCCL_DOUBLE_CHECK(checkOutput(caller, comm));
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return fail(ncclInvalidArgument, std::string(caller) + ": rank " + std::to_string(rank) +
                                         " of nranks " + std::to_string(nranks) +
                                         " is out of range");
  auto created = std::make_unique<ncclComm>();
  NCCL_DOUBLE_CHECK(applyConfig(config, *created));
  MPI_Comm privateComm = MPI_COMM_NULL;
  NCCL_DOUBLE_CHECK(rendezvous(commId, nranks, rank, &privateComm));
  created->rank = rank;
  created->size = nranks;
  created->transport = makeMpiTransport(privateComm);
  info("ncclCommInitRank: " + describe(*created));
  *comm = publish(std::move(created));
  return ncclSuccess;
}

ncclResult_t CommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
  return CommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

// Any of the ids names the communicator; the first one's generator collects the ranks.
ncclResult_t CommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                  ncclUniqueId *commIds, ncclConfig_t *config) {
  if (nId < 1 || commIds == nullptr)
    return fail(ncclInvalidArgument, "ncclCommInitRankScalable: needs at least one unique id");
  return CommInitRankConfig(newcomm, nranks, commIds[0], myrank, config);
}

ncclResult_t CommInitAll(ncclComm_t *comm, int ndev, const int *devlist) {
  NCCL_DOUBLE_CHECK(checkOutput("ncclCommInitAll", comm));
  if (ndev < 1)
    return fail(ncclInvalidArgument, "ncclCommInitAll: ndev must be positive");
  std::vector<std::unique_ptr<Transport>> transports(static_cast<std::size_t>(ndev));
  makeLocalClique(ndev, transports.data());
  for (int rank = 0; rank < ndev; ++rank) {
    auto created = std::make_unique<ncclComm>();
    created->rank = rank;
    created->size = ndev;
    created->cuDevice = devlist ? devlist[rank] : rank;
    created->transport = std::move(transports[std::size_t(rank)]);
    comm[rank] = publish(std::move(created));
  }
  info("ncclCommInitAll: " + std::to_string(ndev) + " ranks in this process");
  return ncclSuccess;
}

ncclResult_t CommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                       ncclConfig_t *config) {
  const char *caller = "ncclCommSplit";
  NCCL_DOUBLE_CHECK(checkComm(comm, caller));
  NCCL_DOUBLE_CHECK(checkOutput(caller, newcomm));
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
    return fail(ncclInvalidArgument, "ncclCommSplit: color " + std::to_string(color) +
                                         " is negative and not NCCL_SPLIT_NOCOLOR");
  // The child inherits the parent's settings unless a config says otherwise.
  ncclComm settings;
  settings.blocking = comm->blocking;
  NCCL_DOUBLE_CHECK(applyConfig(config, settings));
  *newcomm = nullptr;

  // Every member learns every member's color and key, then joins the child of its color.
  auto phase = std::make_unique<Phase>();
  phase->comm = comm;
  phase->operation = caller;
  const std::size_t ranks = std::size_t(comm->size);
  auto *requests = reinterpret_cast<SplitRequest *>(phase->stage(ranks * sizeof(SplitRequest)));
  requests[comm->rank] = {color == NCCL_SPLIT_NOCOLOR ? -1 : color, key};
  for (int peer = 0; peer < comm->size; ++peer) {
    if (peer == comm->rank)
      continue;
    phase->transfers.push_back(
        {Transfer::Direction::send, peer, &requests[comm->rank], sizeof(SplitRequest)});
    phase->transfers.push_back(
        {Transfer::Direction::receive, peer, &requests[peer], sizeof(SplitRequest)});
  }
  const int splitOrdinal = comm->splitCount++;
  phase->finish = [comm, requests, ranks, splitOrdinal, newcomm, blocking = settings.blocking,
                   name = settings.name] {
    std::unique_ptr<Transport> child;
    const std::span<const SplitRequest> all(requests, ranks);
    NCCL_DOUBLE_CHECK(comm->transport->split(all, comm->rank, splitOrdinal, child));
    if (!child)
      return ncclSuccess;
    const SplitRequest mine = all[std::size_t(comm->rank)];
    auto created = std::make_unique<ncclComm>();
    for (std::size_t rank = 0; rank < ranks; ++rank) {
      if (all[rank].color != mine.color)
        continue;
      ++created->size;
      if (all[rank].key < mine.key || (all[rank].key == mine.key && int(rank) < comm->rank))
        ++created->rank; // NCCL orders a child by key, then by rank in the parent
    }
    created->cuDevice = comm->cuDevice;
    created->blocking = blocking;
    created->name = name;
    created->transport = std::move(child);
    info("ncclCommSplit: " + describe(*created));
    *newcomm = publish(std::move(created));
    return ncclSuccess;
  };
  return submit(std::move(phase));
}

ncclResult_t CommFinalize(ncclComm_t comm) {
  NCCL_DOUBLE_CHECK(checkComm(comm, "ncclCommFinalize"));
  comm->finalized = true; // nothing is in flight: every operation completed when it returned
  return ncclSuccess;
}

ncclResult_t CommDestroy(ncclComm_t comm) {
  if (!retire(comm))
    return fail(ncclInvalidArgument, "ncclCommDestroy: not a live communicator");
  return ncclSuccess;
}

ncclResult_t CommAbort(ncclComm_t comm) {
  if (!retire(comm))
    return fail(ncclInvalidArgument, "ncclCommAbort: not a live communicator");
  return ncclSuccess;
}

ncclResult_t CommCount(const ncclComm_t comm, int *count) {
  NCCL_DOUBLE_CHECK(checkComm(comm, "ncclCommCount"));
  NCCL_DOUBLE_CHECK(checkOutput("ncclCommCount", count));
  *count = comm->size;
  return ncclSuccess;
}

ncclResult_t CommUserRank(const ncclComm_t comm, int *rank) {
  NCCL_DOUBLE_CHECK(checkComm(comm, "ncclCommUserRank"));
  NCCL_DOUBLE_CHECK(checkOutput("ncclCommUserRank", rank));
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t CommCuDevice(const ncclComm_t comm, int *device) {
  NCCL_DOUBLE_CHECK(checkComm(comm, "ncclCommCuDevice"));
  NCCL_DOUBLE_CHECK(checkOutput("ncclCommCuDevice", device));
  *device = comm->cuDevice;
  return ncclSuccess;
}

ncclResult_t CommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
  NCCL_DOUBLE_CHECK(checkComm(comm, "ncclCommGetAsyncError"));
  NCCL_DOUBLE_CHECK(checkOutput("ncclCommGetAsyncError", asyncError));
  *asyncError = comm->asyncError;
  return ncclSuccess;
}

ncclResult_t RedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                  ncclScalarResidence_t residence, ncclComm_t comm) {
  NCCL_DOUBLE_CHECK(checkComm(comm, "ncclRedOpCreatePreMulSum"));
  return createPreMulSum(op, scalar, datatype, residence, comm->userOps);
}

ncclResult_t RedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  NCCL_DOUBLE_CHECK(checkComm(comm, "ncclRedOpDestroy"));
  return destroyUserOp(op, comm->userOps);
}

} // namespace collcheck::nccl_double
