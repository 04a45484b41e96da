"""parasim: simulate hybrid-parallel Transformer training in-process (the CLI's libraries)."""
from typing import Any, Callable, Iterator, Mapping, Sequence

Progress = Callable[[str, int, int], object]
"""Called as progress(phase, done, total) from the work; an exception it raises is raised when the work ends."""

class InputError(ValueError):
    """A bad scenario file or override: str() is the CLI's one line FILE:LINE:COL: error: key.path: what."""
    file: str
    line: int
    column: int
    key: str
    message: str

class Scenario:
    """A scenario file as parasim read it (cluster, model, training, plan)."""
    @property
    def name(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def gpus(self) -> int: ...

class Result:
    """One simulated training iteration."""
    iteration_s: float
    tokens_per_s: float
    mfu: float
    hfu: float
    fits: bool
    @property
    def interval(self) -> dict[str, float]:
        """The 80% prediction interval: {'lo': seconds, 'hi': seconds}."""
    @property
    def plan(self) -> str: ...
    @property
    def stages(self) -> list[dict[str, Any]]:
        """Per pipeline stage: forward_s, backward_s, recompute_s, optimizer_s, bubble_s, exposed_*_s, memory_bytes, fits."""
    @property
    def memory(self) -> dict[str, Any]: ...
    @property
    def critical_path(self) -> list[dict[str, Any]]: ...
    def to_dict(self) -> dict[str, Any]:
        """The document `parasim simulate --json` prints."""

def load_scenario(path: str | Mapping[str, Any], set: Mapping[str, Any] | Sequence[str] | None = None) -> Scenario:
    """Reads a scenario YAML (a path, or a dict of its keys); set: overrides as {'key.path': value} or ['key.path=value'], as --set."""

def simulate(scenario: Scenario | str | Mapping[str, Any], plan: str | None = None, set: Mapping[str, Any] | Sequence[str] | None = None,
             full_replay: bool = False) -> Result:
    """Simulates one iteration of the scenario's plan, or of the plan file given; a long pipeline's steady state
    extrapolated unless full_replay=True."""

class Validation:
    """Published training runs simulated and compared with their measured step times."""
    mape: float
    rows: int
    simulated: int
    errors: int
    def to_dict(self) -> dict[str, Any]:
        """The document `parasim validate --json` prints."""

def validate(files: Sequence[str], by: str = "", threads: int = 1, progress: Progress | None = None) -> Validation:
    """Simulates every row of the measured-run files and compares with the measured step times."""

class Model:
    """A model as parasim understands it: shape, parameters, FLOPs and activations per token."""
    @property
    def name(self) -> str: ...
    @property
    def layers(self) -> int: ...
    @property
    def hidden(self) -> int: ...
    @property
    def parameters(self) -> float: ...
    @property
    def training_flops_per_token(self) -> float: ...
    def to_dict(self) -> dict[str, Any]:
        """The document `parasim model --json` prints."""

def model_from_hf(config: str | Mapping[str, Any], seq: int = 0) -> Model:
    """Imports a Hugging Face config.json (a path or a dict) as parasim models it."""

class Candidate:
    """One simulated plan of a search, as `parasim plan --json` lists it."""
    rank: int
    plan: str
    tp: int
    sp: bool
    pp: int
    vpp: int
    dp: int
    cp: int
    ep: int
    zero: int
    micro_batch: int
    schedule: str
    iteration_s: float
    interval: dict[str, float]
    """The 80% prediction interval: {'lo': seconds, 'hi': seconds}."""
    tie_group: int | None
    """1: tied with the fastest within the error of a difference between plans; None if it does not fit."""
    margin: float
    """Bytes free at the peak on the fullest GPU."""
    peak_memory_bytes: float
    fits: bool
    recommended: bool
    tokens_per_s: float
    mfu: float
    def to_dict(self) -> dict[str, Any]:
        """This plan's entry of `parasim plan --json`."""

class PlanReport:
    """A plan search: the best plans, the one recommended, and its launch files."""
    candidates: list[Candidate]
    recommended: Candidate | None
    framework: str
    launch_files: dict[str, str]
    """What `parasim plan --out DIR` writes: {file name: text}."""
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Candidate: ...
    def __iter__(self) -> Iterator[Candidate]:
        """The report reads as the list of its candidates."""
    def to_dict(self) -> dict[str, Any]:
        """The document `parasim plan --json` prints."""

def plan(
    scenario: Scenario | str | Mapping[str, Any],
    set: Mapping[str, Any] | Sequence[str] | None = None,
    fix: Mapping[str, Any] | Sequence[str] | None = None,
    framework: str = "any",
    top: int = 10,
    global_batch: int = 0,
    headroom: str = "auto",
    simulate_top: int = 32,
    max_pp: int = 0,
    max_tp: int = 0,
    include: Sequence[str] | None = None,
    threads: int = 0,
    progress: Progress | None = None,
) -> PlanReport:
    """Searches the hybrid parallel plans of a scenario as `parasim plan` does (help(parasim.plan) for each argument)."""

class Variant:
    """One variant of a what-if study, as `parasim whatif --json` lists it."""
    values: dict[str, str]
    label: str
    gpus: int
    gpu: str
    plan: str
    iteration_s: float
    interval: dict[str, float]
    tokens_per_s: float
    mfu: float
    speedup: float
    fits: bool
    failure: str | None
    peak_memory_bytes: float
    breakdown_s: dict[str, Any]
    def to_dict(self) -> dict[str, Any]:
        """This variant's entry of `parasim whatif --json`."""

class Study:
    """A what-if study: the scenario's variants, each re-planned (or its plan kept) and simulated."""
    variants: list[Variant]
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Variant: ...
    def __iter__(self) -> Iterator[Variant]:
        """The study reads as the list of its variants."""
    def to_dict(self) -> dict[str, Any]:
        """The document `parasim whatif --json` prints."""

def whatif(
    scenario: str,
    vary: Mapping[str, Sequence[Any]] | Sequence[str] | None = None,
    set: Mapping[str, Any] | Sequence[str] | None = None,
    fixed_plan: bool = False,
    fix: Mapping[str, Any] | Sequence[str] | None = None,
    framework: str = "any",
    headroom: str = "auto",
    simulate_top: int = 32,
    max_pp: int = 0,
    max_tp: int = 0,
    threads: int = 0,
    progress: Progress | None = None,
) -> Study:
    """Every combination of the varied keys' values, re-planned and simulated, as `parasim whatif` (help(parasim.whatif))."""

class LogReport:
    """Training logs read back: the run each states, its measured step time and parasim's prediction."""
    logs: int
    def to_dict(self) -> dict[str, Any]:
        """The document `parasim calibrate from-log --json` prints."""

def from_log(logs: Sequence[str], gpu: str, gpus_per_node: int = 8, nic_gbps: float | None = None, threads: int = 1) -> LogReport:
    """Megatron-LM, torchtitan or NeMo logs priced as validate prices published runs, as `parasim calibrate from-log`."""
