// send-recv-mismatch: an NCCL send and the receive it is paired with disagree in size or
// datatype, or a send/receive has no partner at all.
#include "analyzer/checks/rule.h"
#include "analyzer/model/signature.h"

namespace collcheck::analyzer {
namespace {

std::string size(const format::Record &r) {
  return std::to_string(r.count) + " x " +
         std::string(format::dataTypeName(static_cast<format::DataType>(r.dataType)));
}

class SendRecvMismatch final : public TraceRule {
public:
  std::string_view id() const override { return "send-recv-mismatch"; }
  void onPointToPoint(const PointToPointEvent &e, RuleContext &ctx) override {
    int32_t sender = e.comm.nameOf(e.sender), receiver = e.comm.nameOf(e.receiver);
    if (e.send && e.recv) {
      if (e.send->count == e.recv->count && e.send->dataType == e.recv->dataType)
        return;
      Finding f = ctx.make(id(), e.comm, *e.send);
      f.message = "rank " + std::to_string(sender) + " sends " + size(*e.send) + " to rank " +
                  std::to_string(receiver) + " on " + e.comm.label + ", which receives " +
                  size(*e.recv);
      f.groups.push_back({"sender", {sender}, describeCall(*e.send)});
      f.groups.push_back({"receiver", {receiver}, describeCall(*e.recv)});
      f.notes.push_back("the k-th send from a to b is paired with the k-th receive at b from a");
      ctx.findings.add(std::move(f), "size|" + size(*e.send) + "|" + size(*e.recv) + "|" +
                                         std::to_string(sender) + ">" + std::to_string(receiver));
      return;
    }
    const format::Record &call = e.send ? *e.send : *e.recv;
    bool outOfRange = call.peer < 0 || call.peer >= e.comm.size;
    // A peer whose trace is missing: the incomplete-trace finding says so. A peer the
    // communicator does not have has no trace either, and no finding but this one.
    if (e.otherSide == Presence::NoTrace && !outOfRange)
      return;
    Finding f = ctx.make(id(), e.comm, call);
    if (e.send)
      f.message = "rank " + std::to_string(sender) + " sends " + size(call) + " to rank " +
                  std::to_string(e.comm.nameOf(e.receiver)) + " on " + e.comm.label +
                  (outOfRange ? ", a rank the communicator does not have"
                              : ", which never posts the matching receive");
    else
      f.message =
          "rank " + std::to_string(receiver) + " waits to receive " + size(call) + " from rank " +
          std::to_string(e.comm.nameOf(e.sender)) + " on " + e.comm.label +
          (outOfRange ? ", a rank the communicator does not have" : ", which never sends it");
    f.groups.push_back(
        {e.send ? "sender" : "receiver", {e.send ? sender : receiver}, describeCall(call)});
    if (e.otherSide == Presence::NotReached)
      f.notes.push_back("the peer was stopped while running: it may have posted the call later");
    ctx.findings.add(std::move(f), std::string(e.send ? "unreceived|" : "unsent|") + size(call) +
                                       "|" + std::to_string(sender) + ">" +
                                       std::to_string(receiver));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeSendRecvMismatchRule() {
  return std::make_unique<SendRecvMismatch>();
}

} // namespace collcheck::analyzer
