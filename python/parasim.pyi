"""parasim: simulate hybrid-parallel Transformer training in-process (the CLI's libraries)."""
from typing import Any, Mapping, Sequence

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
    def to_dict(self) -> dict[str, Any]:
        """The document `parasim simulate --json` prints."""

def load_scenario(path: str, set: Mapping[str, Any] | Sequence[str] | None = None) -> Scenario:
    """Reads a scenario YAML; set: overrides as {'key.path': value} or ['key.path=value'], as --set."""

def simulate(scenario: Scenario | str, plan: str = "", set: Mapping[str, Any] | Sequence[str] | None = None) -> Result:
    """Simulates one iteration of the scenario's plan, or of the plan file given."""

class Validation:
    """Published training runs simulated and compared with their measured step times."""
    mape: float
    rows: int
    simulated: int
    errors: int
    def to_dict(self) -> dict[str, Any]:
        """The document `parasim validate --json` prints."""

def validate(files: Sequence[str], by: str = "", threads: int = 1) -> Validation:
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
