"""What a program may touch, as data: every name here was put on the list on purpose.

Anything not listed is refused. Nothing is refused by pattern except names that start with `_`,
which the interpreter refuses before it looks here. Off the list on purpose: file and network
APIs (torch.save/load/hub/from_file), pickle, torch.jit/compile/ops/library/utils, C++
extensions, process and thread APIs, and global state shared with the next program in the same
worker (default device/dtype, seeds, thread counts, print options, anomaly mode, CUDA memory).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.optim import lr_scheduler

# torch.<name>: functions, dtypes and context managers.
TORCH_FUNCTIONS = frozenset("""
tensor as_tensor from_numpy zeros ones full rand randn randint randperm arange linspace
logspace eye zeros_like ones_like full_like rand_like randn_like randint_like
normal bernoulli multinomial
abs neg exp exp2 log log2 log10 log1p expm1 sqrt rsqrt sin cos tan asin acos atan atan2 sinh cosh
tanh asinh acosh atanh sigmoid relu erf erfc square reciprocal sign sgn floor ceil round trunc frac
clamp clip clamp_min clamp_max pow float_power add sub mul div true_divide floor_divide remainder
fmod lerp maximum minimum fmax fmin hypot logaddexp xlogy nan_to_num heaviside
matmul mm bmm mv dot vdot inner outer addmm addmv einsum tensordot kron cross cdist
sum mean prod std var std_mean var_mean norm dist max min amax amin argmax argmin cumsum cumprod
cummax cummin logsumexp softmax log_softmax median mode sort argsort topk kthvalue unique
all any eq ne lt le gt ge equal allclose isclose isnan isinf isfinite isneginf isposinf isreal
where masked_select masked_fill gather scatter scatter_add index_select take take_along_dim
cat concat stack hstack vstack dstack split chunk unbind tensor_split narrow select squeeze
unsqueeze reshape flatten unflatten permute transpose t movedim swapaxes flip fliplr flipud roll
rot90 diag diagonal diag_embed tril triu trace broadcast_to broadcast_tensors meshgrid
cartesian_prod combinations block_diag repeat_interleave tile atleast_1d atleast_2d atleast_3d
numel is_tensor is_floating_point is_nonzero clone detach count_nonzero bincount histc bucketize
searchsorted dropout layer_norm batch_norm nonzero argwhere
logical_and logical_or logical_xor logical_not
finfo iinfo get_default_dtype
no_grad enable_grad set_grad_enabled is_grad_enabled inference_mode is_inference_mode_enabled
autocast Size Tensor device
float32 float float64 double float16 half bfloat16 int64 long int32 int int16 short int8 uint8
bool complex64 cfloat
e pi inf nan
""".split())

# Tensor methods and attributes. Off the list on purpose: storage and data pointers,
# share_memory_/pin_memory, resize_/set_, apply_/map_, and everything starting with `_`.
# torch.empty and its kin are off both lists: uninitialised memory can still hold the numbers of
# the program that ran before in the same worker.
TENSOR_ATTRIBUTES = frozenset("""
grad grad_fn requires_grad is_leaf data shape dtype device ndim T mT H mH is_cuda retains_grad
layout names real imag stride is_inference
backward detach detach_ retain_grad requires_grad_ register_hook numpy item tolist
size dim numel nelement element_size nbytes itemsize is_floating_point is_complex is_contiguous
clone contiguous to cpu cuda type type_as float double half bfloat16 int long bool short
view view_as reshape reshape_as flatten unflatten squeeze unsqueeze permute transpose t movedim
swapaxes narrow select index_select gather scatter scatter_ scatter_add scatter_add_ masked_fill
masked_fill_ masked_select where chunk split unbind flip roll diag diagonal tril triu trace
expand expand_as repeat repeat_interleave tile new_tensor new_zeros new_ones new_full
abs abs_ neg neg_ exp exp_ log log_ log2 log10 log1p expm1 sqrt sqrt_ rsqrt sin cos tan asin acos
atan atan2 sinh cosh tanh tanh_ sigmoid sigmoid_ relu relu_ erf square reciprocal sign floor ceil
round trunc frac clamp clamp_ clip clip_ clamp_min clamp_max pow pow_ add add_ sub sub_ mul mul_
div div_ true_divide floor_divide remainder fmod lerp lerp_ maximum minimum hypot nan_to_num
addcmul addcmul_ addcdiv addcdiv_
matmul mm bmm mv dot outer inner addmm cross
sum mean prod std var norm dist max min amax amin argmax argmin cumsum cumprod logsumexp softmax
log_softmax median mode sort argsort topk kthvalue unique all any count_nonzero
eq ne lt le gt ge equal allclose isclose isnan isinf isfinite nonzero argwhere
logical_and logical_or logical_xor logical_not
zero_ fill_ copy_ normal_ uniform_ bernoulli_ exponential_ random_ fill_diagonal_
""".split())

# Calls whose output can be far larger than their inputs, by the names torch calls them with
# (torch.x, Tensor.x and Tensor.__x__ alike, so also the ones torch calls for itself, such as
# torch.empty inside nn.Linear): size_guard.SizeGuard measures them on the meta device first
# (shapes only, no memory) and refuses them if the result is over the limit.
GROWING_CALLS = frozenset("""
zeros ones empty full rand randn randint randperm arange linspace logspace eye normal
zeros_like ones_like empty_like full_like rand_like randn_like randint_like
matmul rmatmul mm bmm mv outer inner addmm einsum tensordot kron cdist cross linear bilinear
cat concat stack hstack vstack dstack meshgrid cartesian_prod combinations block_diag
broadcast_to broadcast_tensors repeat_interleave tile diag diag_embed index_select embedding
expand expand_as repeat new_zeros new_ones new_full new_empty one_hot pad histc multinomial
bincount linalg_svd linalg_qr linalg_pinv linalg_multi_dot linalg_matmul
nonzero argwhere
conv1d conv2d adaptive_avg_pool1d adaptive_avg_pool2d adaptive_max_pool1d adaptive_max_pool2d
""".split())

# The calls among them that make a tensor from sizes alone; measured with device="meta".
FACTORIES = frozenset("""
zeros ones empty full rand randn randint randperm arange linspace logspace eye normal
""".split())

NN_CLASSES = frozenset("""
Module Parameter Linear Bilinear Identity Sequential ModuleList Flatten Unflatten
ReLU ReLU6 LeakyReLU PReLU ELU SELU GELU SiLU Mish Sigmoid Tanh Softplus Softsign Hardtanh
Softmax LogSoftmax Dropout BatchNorm1d LayerNorm Embedding
Conv1d Conv2d MaxPool1d MaxPool2d AvgPool1d AvgPool2d AdaptiveAvgPool1d AdaptiveAvgPool2d
BatchNorm2d
MSELoss L1Loss SmoothL1Loss HuberLoss CrossEntropyLoss NLLLoss BCELoss BCEWithLogitsLoss
KLDivLoss
""".split())

NN_FUNCTIONAL = frozenset("""
relu relu6 leaky_relu elu selu gelu silu mish sigmoid tanh softplus softsign hardtanh softmax
log_softmax dropout linear bilinear normalize one_hot pad layer_norm batch_norm embedding
mse_loss l1_loss smooth_l1_loss huber_loss cross_entropy nll_loss binary_cross_entropy
binary_cross_entropy_with_logits kl_div cosine_similarity pairwise_distance
conv1d conv2d max_pool1d max_pool2d avg_pool1d avg_pool2d adaptive_avg_pool1d adaptive_avg_pool2d
""".split())

NN_INIT = frozenset("""
uniform_ normal_ constant_ ones_ zeros_ eye_ xavier_uniform_ xavier_normal_ kaiming_uniform_
kaiming_normal_ orthogonal_ trunc_normal_ calculate_gain
""".split())

NN_UTILS = frozenset("clip_grad_norm_ clip_grad_value_ parameters_to_vector".split())

OPTIMIZERS = frozenset("SGD Adam AdamW RMSprop Adagrad Adadelta Adamax NAdam RAdam LBFGS".split())

LR_SCHEDULERS = frozenset("""
StepLR MultiStepLR ExponentialLR CosineAnnealingLR CosineAnnealingWarmRestarts ReduceLROnPlateau
OneCycleLR LinearLR ConstantLR LambdaLR MultiplicativeLR SequentialLR CyclicLR PolynomialLR
""".split())

# torch.linalg: the closed-form answers a lesson compares gradient descent with, and norms.
LINALG = frozenset("""
norm vector_norm matrix_norm det slogdet inv solve lstsq eig eigh eigvals eigvalsh svd svdvals qr
cholesky pinv matrix_rank cross matmul multi_dot matrix_power
""".split())

AUTOGRAD = frozenset("grad backward gradcheck gradgradcheck Function detect_anomaly".split())
AUTOGRAD_FUNCTIONAL = frozenset("jacobian hessian vjp jvp".split())

MATH = frozenset("""
sqrt exp log log2 log10 sin cos tan atan atan2 tanh pi e inf nan isnan isinf isfinite floor ceil
fabs hypot
""".split())

# Attributes of the objects a program can hold, by type. Checked in order with isinstance.
MODULE_ATTRIBUTES = frozenset("""
weight bias parameters named_parameters modules named_modules children named_children zero_grad
train eval training in_features out_features num_features normalized_shape eps momentum
running_mean running_var num_batches_tracked negative_slope p dim reduction forward to cpu cuda
float double requires_grad_ state_dict load_state_dict register_forward_hook
register_full_backward_hook append extend apply register_buffer register_parameter
""".split())
# state_dict: the same param_groups and state, with each parameter as its index.
OPTIMIZER_ATTRIBUTES = frozenset(
    "step zero_grad param_groups state add_param_group defaults state_dict".split())
# Names refused with a hint of their own rather than the general one.
REFUSAL_HINTS = {"manual_seed": "hint.seed", "seed": "hint.seed", "format": "hint.use_fstring"}

# What torch.max(x, dim=...), sort, topk and the like return: named tuples, whose fields (all
# tensors) a program reads by name, m.values and m.indices, as well as by unpacking.
RETURN_TYPE_FIELDS: dict[type, frozenset[str]] = {
    kind: frozenset(kind.__match_args__)  # type: ignore[attr-defined]  # a structseq's fields
    for kind in torch.return_types.all_return_types}

SCHEDULER_ATTRIBUTES = frozenset("step get_last_lr last_epoch base_lrs optimizer".split())
CTX_ATTRIBUTES = frozenset("""
save_for_backward saved_tensors needs_input_grad mark_dirty mark_non_differentiable
set_materialize_grads
""".split())
# variable: AccumulateGrad's leaf, as tutorials show it (b.grad_fn.next_functions[0][0].variable).
NODE_ATTRIBUTES = frozenset(
    "name next_functions metadata register_hook register_prehook variable".split())
HANDLE_ATTRIBUTES = frozenset(["remove"])
SIZE_ATTRIBUTES = frozenset("numel index count".split())
DTYPE_ATTRIBUTES = frozenset("is_floating_point is_complex is_signed itemsize".split())
DEVICE_ATTRIBUTES = frozenset("type index".split())
# torch.finfo(dtype) and torch.iinfo(dtype): a number type's limits, read by name.
FINFO_ATTRIBUTES = frozenset("bits eps max min tiny resolution smallest_normal dtype".split())
IINFO_ATTRIBUTES = frozenset("bits max min dtype".split())
# sort: Runtime.call passes its key through the checked call, as sorted() does.
LIST_ATTRIBUTES = frozenset(
    "append extend pop insert remove index count reverse clear copy sort".split())
TUPLE_ATTRIBUTES = frozenset("index count".split())
# Not update, union and the like: they would consume any iterable in C, unticked.
SET_ATTRIBUTES = frozenset(["add"])
DICT_ATTRIBUTES = frozenset("keys values items get pop update copy clear setdefault".split())
STR_ATTRIBUTES = frozenset("""
upper lower strip lstrip rstrip split startswith endswith join replace count find title capitalize
isdigit isalpha splitlines ljust rjust center zfill format
""".split())
# The str methods whose first argument is the width of the string they make (Runtime.call
# bounds it).
STR_WIDTHS = frozenset("ljust rjust center zfill".split())
FLOAT_ATTRIBUTES = frozenset("is_integer".split())
NDARRAY_ATTRIBUTES = frozenset("shape dtype ndim size tolist item sum mean min max".split())

# Tensor attributes a program may assign (`a.grad = None`, `w.requires_grad = True`).
TENSOR_SETTABLE = frozenset("grad requires_grad data".split())

# Context managers a `with` statement may enter; the grad modes may also decorate a `def`.
GRAD_MODES: tuple[type, ...] = (
    torch.no_grad, torch.enable_grad, torch.set_grad_enabled, torch.inference_mode)
# detect_anomaly only as a `with`: its mode is global, and run_program turns it off after every
# run, as it restores grad mode (torch.autograd.set_detect_anomaly stays refused).
CONTEXT_MANAGERS: tuple[type, ...] = (*GRAD_MODES, torch.autocast, torch.autograd.detect_anomaly)

# Types `isinstance` may be asked about: Python's own, and every class a program can name
# (`for m in model.modules(): if isinstance(m, nn.Linear): ...` is how models are initialised).
ISINSTANCE_TYPES: tuple[type, ...] = (
    torch.Tensor, torch.Size, torch.dtype, int, float, bool, str, list, tuple, dict, set,
    *(getattr(nn, name) for name in sorted(NN_CLASSES)),
    *(getattr(optim, name) for name in sorted(OPTIMIZERS)),
    *(getattr(lr_scheduler, name) for name in sorted(LR_SCHEDULERS)),
)

# Exposed for isinstance and subclassing only: calling them is refused (torch.Tensor(10**6, 10**6)
# would allocate through the legacy constructor, which the size checks don't see).
NOT_CALLABLE: tuple[object, ...] = (torch.Tensor, torch.autograd.Function)


class Namespace:
    """A module as a program sees it: only the listed members, nothing else reachable."""

    __slots__ = ("path", "members")

    def __init__(self, path: str, members: dict[str, object]) -> None:
        self.path = path
        self.members = members

    def __repr__(self) -> str:
        return f"<module '{self.path}'>"


def _pick(module: object, names: frozenset[str]) -> dict[str, object]:
    return {name: getattr(module, name) for name in sorted(names) if hasattr(module, name)}


def cuda_is_available() -> bool:
    """torch.cuda.is_available() as a program sees it: whether its run is on a GPU.

    .. note:: `device = torch.device("cuda" if torch.cuda.is_available() else "cpu")` starts
       most PyTorch code. The lab runs a program on the device its request chose (on a GPU
       server, through torch's device context), so that is the GPU a program may use. The rest
       of torch.cuda (memory, streams, seeds) is shared by the worker's later runs: refused.
    """
    return torch.get_default_device().type == "cuda"


def build_namespaces() -> dict[str, Namespace]:
    """The importable modules, keyed by their dotted path."""
    init = Namespace("torch.nn.init", _pick(nn.init, NN_INIT))
    utils = Namespace("torch.nn.utils", _pick(nn.utils, NN_UTILS))
    functional = Namespace("torch.nn.functional", _pick(F, NN_FUNCTIONAL))
    nn_ns = Namespace("torch.nn", _pick(nn, NN_CLASSES)
                      | {"functional": functional, "init": init, "utils": utils})
    sched = Namespace("torch.optim.lr_scheduler", _pick(lr_scheduler, LR_SCHEDULERS))
    optim_ns = Namespace("torch.optim", _pick(optim, OPTIMIZERS) | {"lr_scheduler": sched})
    autograd_functional = Namespace("torch.autograd.functional",
                                    _pick(torch.autograd.functional, AUTOGRAD_FUNCTIONAL))
    autograd_ns = Namespace("torch.autograd", _pick(torch.autograd, AUTOGRAD)
                            | {"functional": autograd_functional})
    linalg = Namespace("torch.linalg", _pick(torch.linalg, LINALG))
    cuda = Namespace("torch.cuda", {"is_available": cuda_is_available})
    torch_ns = Namespace("torch", _pick(torch, TORCH_FUNCTIONS) | {
        "nn": nn_ns, "optim": optim_ns, "autograd": autograd_ns, "linalg": linalg,
        "cuda": cuda})
    math_ns = Namespace("math", _pick(math, MATH))
    return {"torch": torch_ns, "torch.nn": nn_ns, "torch.nn.functional": functional,
              "torch.optim": optim_ns, "torch.optim.lr_scheduler": sched,
              "torch.autograd": autograd_ns, "torch.nn.init": init, "torch.nn.utils": utils,
              "torch.autograd.functional": autograd_functional, "torch.linalg": linalg,
              "math": math_ns}
