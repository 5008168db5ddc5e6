"""One-line declarations of what PyTorch's data-parallel wrappers do to gradients beyond the
collective on the wire, so that collcheck verifies their reductions without an annotation per
bucket (docs/annotations.md):

    model = DistributedDataParallel(net)
    collcheck.torch.declare_ddp(model)          # each bucket is divided by P, then SUM-reduced

    model = FullyShardedDataParallel(net)
    collcheck.torch.declare_fsdp(model)         # FSDP's pre- and post-divide factors

    collcheck.torch.record_call_sites()         # findings name the line of each dist.* call

Written against the documented torch APIs and the attributes the wrappers keep (named below). It
imports torch only where a fallback needs it; it never runs a collective. Like the rest of the
module, the declarations are no-ops when the collcheck preload library is not loaded.
"""

import collcheck

__all__ = ["declare_ddp", "declare_fsdp", "ddp_reducer_scale", "fsdp_reducer_scale",
           "record_call_sites", "COLLECTIVES"]

# The functions of torch.distributed that issue collectives or point-to-point transfers (those a
# given torch version lacks are skipped).
COLLECTIVES = (
    "all_reduce", "all_reduce_coalesced", "broadcast", "reduce", "all_gather",
    "all_gather_into_tensor", "_all_gather_base", "all_gather_coalesced", "all_gather_object",
    "gather", "gather_object", "scatter", "scatter_object_list", "reduce_scatter",
    "reduce_scatter_tensor", "_reduce_scatter_base", "all_to_all", "all_to_all_single",
    "broadcast_object_list", "barrier", "monitored_barrier", "send", "recv", "isend", "irecv",
    "batch_isend_irecv",
)


def _group_size(group):
    """Size of a c10d process group (ProcessGroup.size()), or of the default group."""
    if group is not None and hasattr(group, "size"):
        return int(group.size())
    import torch.distributed as dist  # only when the wrapper did not keep its group

    return int(dist.get_world_size(group))


def ddp_reducer_scale(model):
    """The factor DistributedDataParallel applies to every gradient bucket before its SUM
    all-reduce: 1/P, P the size of the wrapper's process group (DDP keeps it in
    `model.process_group`)."""
    if not hasattr(model, "register_comm_hook") or not hasattr(model, "module"):
        raise TypeError("collcheck.torch.declare_ddp: expected a DistributedDataParallel model, "
                        f"not {type(model).__name__}")
    return 1.0 / _group_size(getattr(model, "process_group", None))


def _default_allreduce_hook():
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    return default_hooks.allreduce_hook


def declare_ddp(model, comm_hook=False):
    """Declares DDP's division by the world size for every window (collcheck.window_begin) and
    returns the factor.

    With `comm_hook`, it registers a DDP communication hook instead (model.register_comm_hook,
    which DDP accepts once, before the first backward): the hook declares the factor right before
    each bucket's all-reduce and then runs DDP's default allreduce_hook, which divides the bucket
    by the group size and all-reduces it with SUM, as DDP does without a hook. Each bucket's
    all-reduce is then recorded as "DistributedDataParallel bucket <i> (<model class>)" at the line
    that defines the model's class: findings name DDP's reducer, not a line of torch."""
    factor = ddp_reducer_scale(model)
    if not comm_hook:
        collcheck.reducer_scale(factor, every_window=True)
        return factor
    group = getattr(model, "process_group", None)
    allreduce_hook = _default_allreduce_hook()

    import inspect

    # Each bucket's all-reduce is named as DDP's, on the line where the model's class is defined.
    net = type(getattr(model, "module", model))
    try:
        where = (inspect.getsourcefile(net) or "<unknown>", inspect.getsourcelines(net)[1])
    except (TypeError, OSError):
        where = ("<unknown>", 0)
    sites = {}

    def declaring_allreduce_hook(state, bucket):
        collcheck.reducer_scale(factor)
        index = bucket.index()
        if index not in sites:
            sites[index] = collcheck.source_site(
                where[0], where[1], f"DistributedDataParallel bucket {index} ({net.__name__})")
        with collcheck.site(sites[index]):
            return allreduce_hook(state, bucket)

    model.register_comm_hook(group, declaring_allreduce_hook)
    return factor


def _fsdp2_setting(state, name):
    # FSDP2 keeps its reduction settings on the module's parameter group (torch >= 2.7) or on the
    # state itself (earlier); None when neither has it.
    group = getattr(state, "_fsdp_param_group", None)
    for owner, attribute in ((group, name), (state, "_" + name)):
        if owner is not None and getattr(owner, attribute, None) is not None:
            return getattr(owner, attribute)
    return None


def fsdp_reducer_scale(model):
    """What FSDP applies to gradients besides the reduction on the wire, or None when the op on
    the wire carries the whole division (which the tracer records by itself).

    FullyShardedDataParallel (FSDP1) divides each gradient by `_gradient_predivide_factor` before
    its SUM reduce-scatter (or all-reduce) and by `_gradient_postdivide_factor` after it: the
    factor is 1/(pre * post). fully_shard (FSDP2) reduces with ReduceOp.AVG, or a PreMulSum by
    1/gradient_divide_factor, unless set_force_sum_reduction_for_comms(True) made it a SUM with
    the division around it: only then is there a factor to declare."""
    if hasattr(model, "_gradient_predivide_factor") and hasattr(model, "_gradient_postdivide_factor"):
        if getattr(model, "_comm_hook", None) is not None:
            raise ValueError("collcheck.torch.declare_fsdp: this FSDP model has a communication "
                             "hook, whose division collcheck cannot read: declare it with "
                             "collcheck.reducer_scale")
        pre = float(model._gradient_predivide_factor)
        post = float(model._gradient_postdivide_factor)
        return 1.0 / (pre * post)
    if hasattr(model, "_get_fsdp_state"):
        state = model._get_fsdp_state()
        if not _fsdp2_setting(state, "force_sum_reduction_for_comms"):
            return None
        factor = _fsdp2_setting(state, "gradient_divide_factor")
        if factor is None:
            import torch.distributed as dist  # the default factor is the data-parallel size

            factor = dist.get_world_size()
        return 1.0 / float(factor)
    raise TypeError("collcheck.torch.declare_fsdp: expected a FullyShardedDataParallel or "
                    f"fully_shard model, not {type(model).__name__}")


def declare_fsdp(model):
    """Declares FSDP's gradient division for every window and returns the factor (None when the
    reduction op itself divides and nothing needs declaring)."""
    factor = fsdp_reducer_scale(model)
    if factor is not None:
        collcheck.reducer_scale(factor, every_window=True)
    return factor


def record_call_sites(names=COLLECTIVES):
    """Has every collective issued through torch.distributed's functions (`names`) recorded as
    made at the line of Python that called the function, where a NCCL or MPI call alone would name
    a line of libtorch: findings then point at the program. Replaces the functions in
    torch.distributed (and its distributed_c10d module), so it holds for calls written
    `dist.all_reduce(...)`; a name imported before (`from torch.distributed import all_reduce`)
    keeps the original. Returns the names replaced: none without the collcheck preload library,
    where it costs nothing. With it, about a microsecond per call (docs/performance.md)."""
    if not collcheck.active():
        return []
    import torch.distributed as dist

    modules = [dist]
    c10d = getattr(dist, "distributed_c10d", None)
    if c10d is not None:
        modules.append(c10d)
    replaced = []
    for name in names:
        for module in modules:
            original = getattr(module, name, None)
            if original is None or not callable(original):
                continue
            wrapped = collcheck.call_sites(original)
            if wrapped is not original:
                setattr(module, name, wrapped)
                if name not in replaced:
                    replaced.append(name)
    return replaced
