"""The options every account command shares (``--region``, ``--profile``, retries), and its error exits.

Region and profile default to boto3's standard configuration chain (``AWS_DEFAULT_REGION``,
``AWS_PROFILE``, ``~/.aws/config``); ``AWS_ENDPOINT_URL_BATCH`` is honoured by botocore
itself. An ``AwsError`` is one line on stderr and exit 2; Ctrl-C is exit 130 and leaves
no partial output file (``output_files.atomic_write``).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import click

from policy_engine.adapters.aws.clients import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_RETRY_MODE,
    RETRY_MODES,
    Api,
    AwsError,
    AwsErrors,
    ClientOptions,
    make_client,
)
from policy_engine.cli.commands.shared import EXIT_BAD_INPUT, SecondsParamType
from policy_engine.foundation.output_files import OutputError

if TYPE_CHECKING:
    from policy_engine.adapters.aws.training_plans import PlansRead

EXIT_INTERRUPTED = 130


def aws_options(function: Callable[..., None]) -> Callable[..., None]:
    """Add the connection options; the command receives them as ``client_options``."""
    options = [
        click.option("--region", default=None, help="AWS Region (default: AWS_DEFAULT_REGION or the profile's)."),
        click.option("--profile", default=None, help="Named profile from the AWS config (default: AWS_PROFILE)."),
        click.option("--retry-mode", type=click.Choice(RETRY_MODES), default=DEFAULT_RETRY_MODE, show_default=True,
                     help="botocore retry mode; adaptive also slows down client-side when throttled."),
        click.option("--max-attempts", type=click.IntRange(min=1), default=DEFAULT_MAX_ATTEMPTS, show_default=True,
                     help="Attempts per call, the first included, before a throttled or failed call is an error."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


class FiniteFloat(SecondsParamType):
    """A number of seconds >= ``minimum``; NaN and infinity are refused (they would poison every sum)."""

    name = "seconds"

    def __init__(self, minimum: float = 0.0):
        self.minimum = minimum

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        import math

        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if number < self.minimum:
            self.fail(f"{value!r} is below {self.minimum:g}", param, ctx)
        return number


def client_options(region: str | None, profile: str | None, retry_mode: str, max_attempts: int,
                   **extra: Any) -> ClientOptions:
    return ClientOptions(region=region, profile=profile, retry_mode=retry_mode, max_attempts=max_attempts, **extra)


#: Tests and the benchmark replace this to hand commands a stubbed client; it is never set in production.
client_factory: Callable[[ClientOptions], Any] = make_client
#: The CloudTrail client ``history`` reads past changes with; replaced by tests as ``client_factory`` is.
cloudtrail_factory: Callable[[ClientOptions], Any] = functools.partial(make_client, service="cloudtrail")


#: The SageMaker client ``import``, ``drift`` and ``snapshot`` read training plans with; replaced by tests.
sagemaker_factory: Callable[[ClientOptions], Any] = functools.partial(make_client, service="sagemaker")


def plans_option(function: Callable[..., None]) -> Callable[..., None]:
    """``--training-plans/--no-training-plans``: whether the command reads the account's SageMaker training plans."""
    return click.option("--training-plans/--no-training-plans", "training_plans", default=True, show_default=True,
                        help="Also read the account's SageMaker training plans (ListTrainingPlans, "
                             "DescribeTrainingPlan).")(function)


def sagemaker_unreachable() -> str | None:
    """Why training plans are not read although they were asked for: Batch calls go to an endpoint and SageMaker's
    would go to AWS (for ``batch-quota serve``, set ``AWS_ENDPOINT_URL_SAGEMAKER`` to the same URL)."""
    if os.environ.get("AWS_ENDPOINT_URL_BATCH") and not (os.environ.get("AWS_ENDPOINT_URL_SAGEMAKER")
                                                          or os.environ.get("AWS_ENDPOINT_URL")):
        return ("AWS_ENDPOINT_URL_BATCH is set and AWS_ENDPOINT_URL_SAGEMAKER is not: no SageMaker endpoint for this "
                "account (for batch-quota serve, set it to the same URL; --no-training-plans skips them)")
    return None


def connect_sagemaker(options: ClientOptions) -> Api:
    return Api(sagemaker_factory(options))


def read_account_plans(options: ClientOptions, wanted: bool) -> tuple[PlansRead | None, Api | None]:
    """The account's training plans when ``wanted`` and reachable (``None`` otherwise: a ``note:`` line says why
    an asked-for read was not made), and the SageMaker API that read them (its calls count in the total)."""
    from policy_engine.adapters.aws.training_plans import read_plans

    if not wanted:
        return None, None
    why = sagemaker_unreachable()
    if why is not None:
        click.echo(f"note: training plans not read: {why}", err=True)
        return None, None
    api = connect_sagemaker(options)
    read = read_plans(api)
    for name, reason in read.skipped:
        click.echo(f"skipped training plan {name}: {reason}", err=True)
    return read, api


def connect(options: ClientOptions) -> Api:
    return Api(client_factory(options))


def connect_cloudtrail(options: ClientOptions) -> Api:
    return Api(cloudtrail_factory(options))


def fail_aws(errors: list[AwsError]) -> None:
    for error in errors:
        click.echo(f"error: {error.line}", err=True)
    raise SystemExit(EXIT_BAD_INPUT)


@contextlib.contextmanager
def exits_on_aws_errors() -> Iterator[None]:
    """``AwsError`` or an unwritable output file -> one line, exit 2; Ctrl-C -> one line, exit 130 (no traceback)."""
    try:
        yield
    except AwsError as error:
        fail_aws([error])
    except AwsErrors as group:
        fail_aws(group.errors)
    except OutputError as error:
        click.echo(f"error: {error.line}", err=True)
        raise SystemExit(EXIT_BAD_INPUT) from None
    except KeyboardInterrupt:
        click.echo("interrupted: nothing was written", err=True)
        raise SystemExit(EXIT_INTERRUPTED) from None
