// The collectives and point-to-point operations, each built as one phase (group.h) of simple
// algorithms: every rank sends its (pre-multiplied) contribution straight to the ranks that need
// it and each receiver combines the contributions in rank order 0..P-1, so every rank that
// computes a result computes it bit for bit alike.
#include "tests/nccl_double/src/api.h"
#include "tests/nccl_double/src/communicator.h"
#include "tests/nccl_double/src/errors.h"
#include "tests/nccl_double/src/group.h"

#include <cstring>
#include <string>

namespace collcheck::nccl_double {
namespace {

using Direction = Transfer::Direction;

ncclResult_t checkUsable(const char *operation, ncclComm *comm) {
  NCCL_DOUBLE_CHECK(checkComm(comm, operation));
  if (comm->finalized)
    return fail(ncclInvalidUsage, std::string(operation) + ": the communicator is finalized");
  return ncclSuccess;
}

ncclResult_t checkType(const char *operation, ncclDataType_t type, const DataTypeOps *&ops) {
  const char *why = "";
  ops = dataTypeOps(type, &why);
  if (ops == nullptr)
    return fail(ncclInvalidArgument,
                std::string(operation) + ": datatype " + std::to_string(int(type)) + ": " + why);
  return ncclSuccess;
}

ncclResult_t checkRank(const char *operation, const char *what, int rank, const ncclComm *comm) {
  if (rank < 0 || rank >= comm->size)
    return fail(ncclInvalidArgument, std::string(operation) + ": " + what + " " +
                                         std::to_string(rank) + " is not a rank of a " +
                                         std::to_string(comm->size) + "-rank communicator");
  return ncclSuccess;
}

ncclResult_t checkBuffer(const char *operation, const char *which, const void *buffer,
                         std::size_t count) {
  if (buffer == nullptr && count > 0)
    return fail(ncclInvalidArgument, std::string(operation) + ": " + which + " is null");
  return ncclSuccess;
}

std::unique_ptr<Phase> newPhase(ncclComm *comm, const char *operation) {
  auto phase = std::make_unique<Phase>();
  phase->comm = comm;
  phase->operation = operation;
  return phase;
}

void addTransfer(Phase &phase, Direction direction, int peer, const void *buffer,
                 std::size_t bytes) {
  if (bytes > 0)
    phase.transfers.push_back({direction, peer, const_cast<void *>(buffer), bytes});
}

// A rank's own contribution as it goes on the wire: pre-multiplied when the reduction says so.
void stageContribution(const ReductionPlan &plan, const void *input, std::byte *staged,
                       std::size_t count) {
  if (count == 0)
    return;
  if (plan.preMultiply)
    plan.ops->preMultiply(staged, input, count, plan.scalar());
  else
    std::memcpy(staged, input, count * plan.ops->size);
}

// result = contribution[0] (op) contribution[1] (op) ... in rank order, then integer ncclAvg's
// division.
void combineInRankOrder(const ReductionPlan &plan, const std::vector<std::byte *> &contributions,
                        std::size_t count, void *result) {
  if (count == 0)
    return;
  std::memmove(result, contributions[0], count * plan.ops->size);
  for (std::size_t rank = 1; rank < contributions.size(); ++rank)
    plan.ops->combine(plan.combine, result, contributions[rank], count);
  if (plan.postDivisor > 0)
    plan.ops->postDivide(result, count, plan.postDivisor);
}

void copyOwnBlock(void *destination, const void *source, std::size_t bytes) {
  if (bytes > 0 && destination != source)
    std::memmove(destination, source, bytes);
}

std::byte *at(void *buffer, std::size_t offset) {
  return static_cast<std::byte *>(buffer) + offset;
}
const std::byte *at(const void *buffer, std::size_t offset) {
  return static_cast<const std::byte *>(buffer) + offset;
}

// Both reductions to one or all ranks: `toAll` false sends every contribution to `root` only.
ncclResult_t reduceCollective(const char *operation, const void *sendbuff, void *recvbuff,
                              std::size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                              bool toAll, ncclComm *comm) {
  NCCL_DOUBLE_CHECK(checkUsable(operation, comm));
  ReductionPlan plan;
  if (ncclResult_t result = planReduction(op, type, comm->size, comm->userOps, plan);
      result != ncclSuccess)
    return fail(result, std::string(operation) + ": " + lastError());
  if (!toAll)
    NCCL_DOUBLE_CHECK(checkRank(operation, "root", root, comm));
  const bool receivesResult = toAll || comm->rank == root;
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "sendbuff", sendbuff, count));
  if (receivesResult)
    NCCL_DOUBLE_CHECK(checkBuffer(operation, "recvbuff", recvbuff, count));

  auto phase = newPhase(comm, operation);
  const std::size_t bytes = count * plan.ops->size;
  std::byte *own = phase->stage(bytes);
  std::vector<std::byte *> contributions(std::size_t(comm->size), own);
  for (int peer = 0; peer < comm->size; ++peer) {
    if (peer == comm->rank)
      continue;
    if (toAll || comm->rank == root) {
      contributions[std::size_t(peer)] = phase->stage(bytes);
      addTransfer(*phase, Direction::receive, peer, contributions[std::size_t(peer)], bytes);
    }
    if (toAll || peer == root)
      addTransfer(*phase, Direction::send, peer, own, bytes);
  }
  phase->prepare = [plan, sendbuff, own, count] { stageContribution(plan, sendbuff, own, count); };
  if (receivesResult)
    phase->finish = [plan, contributions, count, recvbuff] {
      combineInRankOrder(plan, contributions, count, recvbuff);
      return ncclSuccess;
    };
  return submit(std::move(phase));
}

} // namespace

ncclResult_t AllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                       ncclRedOp_t op, ncclComm_t comm, cudaStream_t) {
  return reduceCollective("ncclAllReduce", sendbuff, recvbuff, count, datatype, op, 0, true, comm);
}

ncclResult_t Reduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                    ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t) {
  return reduceCollective("ncclReduce", sendbuff, recvbuff, count, datatype, op, root, false, comm);
}

ncclResult_t ReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t) {
  const char *operation = "ncclReduceScatter";
  NCCL_DOUBLE_CHECK(checkUsable(operation, comm));
  ReductionPlan plan;
  if (ncclResult_t result = planReduction(op, datatype, comm->size, comm->userOps, plan);
      result != ncclSuccess)
    return fail(result, std::string(operation) + ": " + lastError());
  const std::size_t ranks = std::size_t(comm->size);
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "sendbuff", sendbuff, recvcount * ranks));
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "recvbuff", recvbuff, recvcount));

  auto phase = newPhase(comm, operation);
  const std::size_t blockBytes = recvcount * plan.ops->size;
  std::byte *ownInput = phase->stage(blockBytes * ranks); // every block, pre-multiplied
  std::vector<std::byte *> contributions(ranks, at(ownInput, blockBytes * std::size_t(comm->rank)));
  for (int peer = 0; peer < comm->size; ++peer) {
    if (peer == comm->rank)
      continue;
    contributions[std::size_t(peer)] = phase->stage(blockBytes);
    addTransfer(*phase, Direction::receive, peer, contributions[std::size_t(peer)], blockBytes);
    addTransfer(*phase, Direction::send, peer, at(ownInput, blockBytes * std::size_t(peer)),
                blockBytes);
  }
  phase->prepare = [plan, sendbuff, ownInput, recvcount, ranks] {
    stageContribution(plan, sendbuff, ownInput, recvcount * ranks);
  };
  phase->finish = [plan, contributions, recvcount, recvbuff] {
    combineInRankOrder(plan, contributions, recvcount, recvbuff);
    return ncclSuccess;
  };
  return submit(std::move(phase));
}

ncclResult_t Broadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                       int root, ncclComm_t comm, cudaStream_t) {
  const char *operation = "ncclBroadcast";
  const DataTypeOps *ops = nullptr;
  NCCL_DOUBLE_CHECK(checkUsable(operation, comm));
  NCCL_DOUBLE_CHECK(checkType(operation, datatype, ops));
  NCCL_DOUBLE_CHECK(checkRank(operation, "root", root, comm));
  if (comm->rank == root)
    NCCL_DOUBLE_CHECK(checkBuffer(operation, "sendbuff", sendbuff, count));
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "recvbuff", recvbuff, count));

  auto phase = newPhase(comm, operation);
  const std::size_t bytes = count * ops->size;
  if (comm->rank == root) {
    for (int peer = 0; peer < comm->size; ++peer)
      if (peer != root)
        addTransfer(*phase, Direction::send, peer, sendbuff, bytes);
    phase->finish = [recvbuff, sendbuff, bytes] {
      copyOwnBlock(recvbuff, sendbuff, bytes);
      return ncclSuccess;
    };
  } else {
    addTransfer(*phase, Direction::receive, root, recvbuff, bytes);
  }
  return submit(std::move(phase));
}

ncclResult_t Bcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                   cudaStream_t stream) {
  return Broadcast(buff, buff, count, datatype, root, comm, stream);
}

ncclResult_t AllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                       ncclDataType_t datatype, ncclComm_t comm, cudaStream_t) {
  const char *operation = "ncclAllGather";
  const DataTypeOps *ops = nullptr;
  NCCL_DOUBLE_CHECK(checkUsable(operation, comm));
  NCCL_DOUBLE_CHECK(checkType(operation, datatype, ops));
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "sendbuff", sendbuff, sendcount));
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "recvbuff", recvbuff, sendcount));

  auto phase = newPhase(comm, operation);
  const std::size_t bytes = sendcount * ops->size;
  for (int peer = 0; peer < comm->size; ++peer) {
    if (peer == comm->rank)
      continue;
    addTransfer(*phase, Direction::send, peer, sendbuff, bytes);
    addTransfer(*phase, Direction::receive, peer, at(recvbuff, bytes * std::size_t(peer)), bytes);
  }
  std::byte *ownBlock = at(recvbuff, bytes * std::size_t(comm->rank));
  phase->finish = [ownBlock, sendbuff, bytes] {
    copyOwnBlock(ownBlock, sendbuff, bytes);
    return ncclSuccess;
  };
  return submit(std::move(phase));
}

ncclResult_t AlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                      ncclComm_t comm, cudaStream_t) {
  const char *operation = "ncclAlltoAll";
  const DataTypeOps *ops = nullptr;
  NCCL_DOUBLE_CHECK(checkUsable(operation, comm));
  NCCL_DOUBLE_CHECK(checkType(operation, datatype, ops));
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "sendbuff", sendbuff, count));
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "recvbuff", recvbuff, count));

  auto phase = newPhase(comm, operation);
  const std::size_t bytes = count * ops->size;
  const std::size_t ranks = std::size_t(comm->size);
  // Received blocks wait in staging: recvbuff may be sendbuff, still being sent from.
  std::vector<std::byte *> received(ranks, nullptr);
  for (int peer = 0; peer < comm->size; ++peer) {
    if (peer == comm->rank)
      continue;
    received[std::size_t(peer)] = phase->stage(bytes);
    addTransfer(*phase, Direction::send, peer, at(sendbuff, bytes * std::size_t(peer)), bytes);
    addTransfer(*phase, Direction::receive, peer, received[std::size_t(peer)], bytes);
  }
  const int self = comm->rank;
  phase->finish = [received, sendbuff, recvbuff, bytes, self] {
    copyOwnBlock(at(recvbuff, bytes * std::size_t(self)), at(sendbuff, bytes * std::size_t(self)),
                 bytes);
    for (std::size_t peer = 0; peer < received.size(); ++peer)
      if (received[peer] != nullptr)
        copyOwnBlock(at(recvbuff, bytes * peer), received[peer], bytes);
    return ncclSuccess;
  };
  return submit(std::move(phase));
}

ncclResult_t Gather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                    int root, ncclComm_t comm, cudaStream_t) {
  const char *operation = "ncclGather";
  const DataTypeOps *ops = nullptr;
  NCCL_DOUBLE_CHECK(checkUsable(operation, comm));
  NCCL_DOUBLE_CHECK(checkType(operation, datatype, ops));
  NCCL_DOUBLE_CHECK(checkRank(operation, "root", root, comm));
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "sendbuff", sendbuff, count));
  if (comm->rank == root)
    NCCL_DOUBLE_CHECK(checkBuffer(operation, "recvbuff", recvbuff, count));

  auto phase = newPhase(comm, operation);
  const std::size_t bytes = count * ops->size;
  if (comm->rank != root) {
    addTransfer(*phase, Direction::send, root, sendbuff, bytes);
    return submit(std::move(phase));
  }
  for (int peer = 0; peer < comm->size; ++peer)
    if (peer != root)
      addTransfer(*phase, Direction::receive, peer, at(recvbuff, bytes * std::size_t(peer)), bytes);
  std::byte *ownBlock = at(recvbuff, bytes * std::size_t(root));
  phase->finish = [ownBlock, sendbuff, bytes] {
    copyOwnBlock(ownBlock, sendbuff, bytes);
    return ncclSuccess;
  };
  return submit(std::move(phase));
}

ncclResult_t Scatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                     int root, ncclComm_t comm, cudaStream_t) {
  const char *operation = "ncclScatter";
  const DataTypeOps *ops = nullptr;
  NCCL_DOUBLE_CHECK(checkUsable(operation, comm));
  NCCL_DOUBLE_CHECK(checkType(operation, datatype, ops));
  NCCL_DOUBLE_CHECK(checkRank(operation, "root", root, comm));
  if (comm->rank == root)
    NCCL_DOUBLE_CHECK(checkBuffer(operation, "sendbuff", sendbuff, count));
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "recvbuff", recvbuff, count));

  auto phase = newPhase(comm, operation);
  const std::size_t bytes = count * ops->size;
  if (comm->rank != root) {
    addTransfer(*phase, Direction::receive, root, recvbuff, bytes);
    return submit(std::move(phase));
  }
  for (int peer = 0; peer < comm->size; ++peer)
    if (peer != root)
      addTransfer(*phase, Direction::send, peer, at(sendbuff, bytes * std::size_t(peer)), bytes);
  const std::byte *ownBlock = at(sendbuff, bytes * std::size_t(root));
  phase->finish = [recvbuff, ownBlock, bytes] {
    copyOwnBlock(recvbuff, ownBlock, bytes);
    return ncclSuccess;
  };
  return submit(std::move(phase));
}

namespace {

ncclResult_t pointToPoint(const char *operation, Direction direction, const void *buffer,
                          std::size_t count, ncclDataType_t datatype, int peer, ncclComm *comm) {
  const DataTypeOps *ops = nullptr;
  NCCL_DOUBLE_CHECK(checkUsable(operation, comm));
  NCCL_DOUBLE_CHECK(checkType(operation, datatype, ops));
  NCCL_DOUBLE_CHECK(checkRank(operation, "peer", peer, comm));
  NCCL_DOUBLE_CHECK(checkBuffer(operation, "buffer", buffer, count));
  auto phase = newPhase(comm, operation);
  phase->pointToPoint = true;
  addTransfer(*phase, direction, peer, buffer, count * ops->size);
  return submit(std::move(phase));
}

} // namespace

ncclResult_t Send(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                  ncclComm_t comm, cudaStream_t) {
  return pointToPoint("ncclSend", Direction::send, sendbuff, count, datatype, peer, comm);
}

ncclResult_t Recv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                  cudaStream_t) {
  return pointToPoint("ncclRecv", Direction::receive, recvbuff, count, datatype, peer, comm);
}

ncclResult_t GroupStart() { return groupStart(); }
ncclResult_t GroupEnd() { return groupEnd(); }

} // namespace collcheck::nccl_double
