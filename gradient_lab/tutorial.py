"""The tutorial walked in order (its examples S1-S22): each stop links to the lab
that shows it. /lessons renders this list; every link is a shareable lab state.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Link:
    lab: str  # graph | descent | training: the i18n key lessons.lab.<lab> names it
    target: str  # the example, story or lesson it opens, which names the link beside its lab

    @property
    def href(self) -> str:
        return {"graph": "/#ex={}", "descent": "/descent#preset={}",
                "training": "/training#lesson={}"}[self.lab].format(self.target)


@dataclass(frozen=True, slots=True)
class Stop:
    id: str
    section: str
    title_en: str
    title_zh: str
    links: tuple[Link, ...]


def _graph(example: str) -> Link:
    return Link("graph", example)


def _descent(preset: str) -> Link:
    return Link("descent", preset)


def _training(lesson: str) -> Link:
    return Link("training", lesson)


TUTORIAL: tuple[Stop, ...] = (
    Stop("S1", "2.1", "A computation graph", "计算图", (_graph("S1"),)),
    Stop("S2", "2.3", "backward() and the chain rule", "backward() 与链式法则", (_graph("S2"),)),
    Stop("S3", "2.3", "Gradients accumulate", "梯度会累加", (_graph("S3"),)),
    Stop("S4", "3.1", "Leaves, grad_fn and requires_grad", "叶子节点、grad_fn 与 requires_grad",
         (_graph("S4"),)),
    Stop("S5", "3.2", "torch.no_grad() for evaluation", "评估时使用 torch.no_grad()",
         (_graph("S5"),)),
    Stop("S6", "3.2", "detach() cuts the graph", "detach() 切断计算图", (_graph("S6"),)),
    Stop("S7", "3.2", "torch.set_grad_enabled", "torch.set_grad_enabled", (_graph("S7"),)),
    Stop("S8", "3.2", "From a tensor to NumPy", "张量转 NumPy", (_graph("S8"),)),
    Stop("S9", "3.3", "Higher-order gradients", "高阶梯度", (_graph("S9"),)),
    Stop("S10", "3.3", "A custom autograd.Function: MyReLU", "自定义 autograd.Function：MyReLU",
         (_graph("S10"),)),
    Stop("S11", "4.1", "The training loop", "训练循环", (_training("train"),)),
    Stop("S12", "4.2", "Choosing an optimizer", "选择优化器",
         (_descent("table"), _descent("ravine"), _descent("rosenbrock"),
          _descent("weight_decay"))),
    Stop("S13", "4.2", "Learning-rate schedulers", "学习率调度器", (_descent("schedulers"),)),
    Stop("S14", "4.3", "A learning rate per parameter group", "为不同参数组设置不同学习率",
         (_descent("groups"),)),
    Stop("S15", "5.1", "Vanishing and exploding gradients", "梯度消失与梯度爆炸",
         (_training("flow"),)),
    Stop("S16", "5.1", "Gradient clipping", "梯度裁剪", (_descent("cliff"), _training("train"))),
    Stop("S17", "5.2", "gradcheck", "梯度检查 gradcheck", (_graph("S17"),)),
    Stop("S18", "5.3", "backward on a tensor with no grad_fn", "对没有 grad_fn 的张量调用 backward",
         (_graph("S18"),)),
    Stop("S19", "5.3", "backward twice, and retain_graph", "两次 backward 与 retain_graph",
         (_graph("S19"), _graph("S19b"))),
    Stop("S20", "5.3", "Out of memory, accumulation and mixed precision",
         "显存不足、梯度累积与混合精度",
         (_graph("S20"), _graph("S20b"), _training("accumulation"), _training("precision"))),
    Stop("S21", "5.3", "Hunting a NaN", "排查 NaN",
         (_graph("S21"), _graph("S21b"), _descent("too_large"), _training("nan"))),
    Stop("S22", "1, 2.2", "Walking down blindfolded; a dynamic graph", "蒙眼下山；动态图",
         (_descent("blindfold"), _graph("S22"))),
)
