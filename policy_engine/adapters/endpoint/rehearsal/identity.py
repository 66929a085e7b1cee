"""STS and SSM as the CDK CLI needs them: who the caller is, the bootstrap roles it assumes, and the bootstrap
version parameter it reads.

Any credentials are this account's (signatures are not verified, as for Batch); an assumed role gets dummy
credentials. ``/cdk-bootstrap/QUALIFIER/version`` answers ``BOOTSTRAP_VERSION`` for any qualifier, so the
account reads as bootstrapped without ``cdk bootstrap`` (docs/rehearsal.md); parameters a template or a
caller puts are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from policy_engine.adapters.endpoint.base.errors import ApiError

#: The bootstrap stack version the rehearsal reports before any ``cdk bootstrap`` (the pinned CDK CLI's bootstrap
#: template, 2.1148, is version 33; templates require at least 6).
BOOTSTRAP_VERSION = "33"
BOOTSTRAP_PARAMETER = re.compile(r"/cdk-bootstrap/[A-Za-z0-9_-]+/version")


@dataclass
class Parameters:
    """SSM parameters by name: (value, version)."""

    region: str
    account: str
    values: dict[str, tuple[str, int]] = field(default_factory=dict)

    def get(self, name: str) -> str | None:
        if name in self.values:
            return self.values[name][0]
        if BOOTSTRAP_PARAMETER.fullmatch(name):
            return BOOTSTRAP_VERSION
        return None

    def put(self, name: str, value: str) -> int:
        version = self.values.get(name, ("", 0))[1] + 1
        self.values[name] = (value, version)
        return version

    def _record(self, name: str) -> dict[str, Any]:
        value = self.get(name)
        if value is None:
            raise ApiError(f"Parameter {name} not found.", "ParameterNotFound", 400)
        return {"Name": name, "Type": "String", "Value": value, "Version": self.values.get(name, ("", 1))[1],
                "ARN": f"arn:aws:ssm:{self.region}:{self.account}:parameter/{name.lstrip('/')}",
                "DataType": "text"}

    def handle(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        """SSM's JSON 1.1 operations: GetParameter, GetParameters, PutParameter, DeleteParameter."""
        if operation == "GetParameter":
            return {"Parameter": self._record(params["Name"])}
        if operation == "GetParameters":
            found: list[str] = []
            missing: list[str] = []
            for name in params.get("Names") or ():
                (found if self.get(name) is not None else missing).append(name)
            return {"Parameters": [self._record(n) for n in found], "InvalidParameters": missing}
        if operation == "PutParameter":
            name = params["Name"]
            if name in self.values and not params.get("Overwrite"):
                raise ApiError(f"The parameter {name} already exists.", "ParameterAlreadyExists", 400)
            return {"Version": self.put(name, params["Value"]), "Tier": "Standard"}
        if operation == "DeleteParameter":
            if self.values.pop(params["Name"], None) is None:
                raise ApiError(f"Parameter {params['Name']} not found.", "ParameterNotFound", 400)
            return {}
        raise ApiError(f"SSM {operation} is not served by the rehearsal (GetParameter, GetParameters, "
                       "PutParameter, DeleteParameter)", "ValidationException", 400)


def sts(operation: str, params: dict[str, Any], region: str, account: str) -> dict[str, Any]:
    """GetCallerIdentity (this account), AssumeRole (dummy credentials for an hour), GetSessionToken."""
    expires = datetime.now(UTC) + timedelta(hours=1)
    credentials = {"AccessKeyId": "ASIABATCHQUOTAREHEARSE", "SecretAccessKey": "rehearsal",
                   "SessionToken": "rehearsal", "Expiration": expires}
    if operation == "GetCallerIdentity":
        return {"UserId": "AIDABATCHQUOTAREHEARSE", "Account": account,
                "Arn": f"arn:aws:iam::{account}:user/batch-quota-rehearsal"}
    if operation == "AssumeRole":
        role = params["RoleArn"]
        session = params["RoleSessionName"]
        return {"Credentials": credentials,
                "AssumedRoleUser": {"AssumedRoleId": f"AROABATCHQUOTA:{session}",
                                    "Arn": f"{role.replace(':role/', ':assumed-role/').replace(':iam:', ':sts:')}"
                                           f"/{session}"}}
    if operation == "GetSessionToken":
        return {"Credentials": credentials}
    raise ApiError(f"STS {operation} is not served by the rehearsal (GetCallerIdentity, AssumeRole, "
                   "GetSessionToken)", "InvalidAction", 400)
