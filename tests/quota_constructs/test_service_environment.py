"""ServiceEnvironment: properties, eager validation, tags, importer."""

from __future__ import annotations

import pytest
from aws_cdk import Stack, Tags
from aws_cdk.assertions import Template

from policy_engine.foundation.model import ServiceEnvironment as ModelEnvironment
from quota_constructs import ServiceEnvironment
from quota_constructs.errors import QuotaConstructError
from tests.quota_constructs.conftest import cfn_lint_errors, fast_app


@pytest.fixture(scope="module")
def built():
    app = fast_app()
    stack = Stack(app, "Envs")
    env = ServiceEnvironment(stack, "Gpu", service_environment_name="gpu-env",
                             capacity={"ml.g5.xlarge": 3, "ml.p4d.24xlarge": 2}, tags={"team": "platform"})
    model = ModelEnvironment(name="from-model", capacity={"ml.g5.xlarge": 1}, state="DISABLED")
    from_model = ServiceEnvironment.from_model(stack, "FromModel", model)
    Tags.of(stack).add("cost-center", "ml")
    return env, from_model, Template.from_stack(stack)


def test_sets_type_name_capacity_in_order_and_tags(built):
    _, _, template = built
    template.has_resource_properties("AWS::Batch::ServiceEnvironment", {
        "ServiceEnvironmentName": "gpu-env",
        "ServiceEnvironmentType": "SAGEMAKER_TRAINING",
        "State": "ENABLED",
        "CapacityLimits": [{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 3},
                           {"CapacityUnit": "ml.p4d.24xlarge", "MaxCapacity": 2}],
        "Tags": {"team": "platform", "cost-center": "ml"},
    })


def test_from_model_keeps_state_and_stack_tags_reach_it(built):
    _, from_model, template = built
    assert from_model.service_environment_name == "from-model"
    template.has_resource_properties("AWS::Batch::ServiceEnvironment", {
        "ServiceEnvironmentName": "from-model", "State": "DISABLED", "Tags": {"cost-center": "ml"},
    })


def test_arn_attribute_is_the_resource_arn(built):
    env, _, template = built
    resolved = Stack.of(env).resolve(env.service_environment_arn)
    logical_id = next(iter(template.find_resources("AWS::Batch::ServiceEnvironment",
                                                   {"Properties": {"ServiceEnvironmentName": "gpu-env"}})))
    assert resolved == {"Fn::GetAtt": [logical_id, "ServiceEnvironmentArn"]}


def test_template_passes_cfn_lint(built):
    assert cfn_lint_errors(built[2].to_json()) == []


@pytest.mark.parametrize(
    ("props", "field", "expected"),
    [
        ({"service_environment_name": "gpu env"}, "service_environment_name", "letters, digits"),
        ({"service_environment_name": "x" * 129}, "service_environment_name", "1-128"),
        ({"capacity": {}}, "capacity", "1-5 instance types"),
        ({"capacity": {f"ml.t{i}": 1 for i in range(6)}}, "capacity", "1-5 instance types"),
        ({"capacity": {"ml.g5.xlarge": 0}}, "capacity[ml.g5.xlarge]", "1-2147483647"),
        ({"capacity": {"ml.g5.xlarge": "3"}}, "capacity[ml.g5.xlarge]", "an integer"),
        ({"state": "PAUSED"}, "state", "ENABLED, DISABLED"),
        ({"tags": {"aws:owner": "x"}}, "tags", "starts with 'aws:', which AWS reserves"),
        ({"tags": {f"k{i}": "v" for i in range(51)}}, "tags", "has 51 tags; AWS allows at most 50"),
    ],
)
def test_invalid_props_raise_naming_construct_field_and_range(props, field, expected):
    stack = Stack(fast_app(), "Bad")
    arguments = {"service_environment_name": "gpu-env", "capacity": {"ml.g5.xlarge": 1}, **props}
    with pytest.raises(QuotaConstructError) as error:
        ServiceEnvironment(stack, "Env", **arguments)
    message = str(error.value)
    assert (error.value.path, error.value.field) == ("Bad/Env", field)
    assert f"{field} = {error.value.value!r} is invalid" in str(error.value)
    assert message.startswith(f"ServiceEnvironment {arguments['service_environment_name']!r}: {field} = ")
    assert expected in message
    assert stack.node.try_find_child("Env") is None  # nothing half-built left in the tree


def test_from_arn_parses_the_name_and_rejects_other_arns():
    stack = Stack(fast_app(), "Import")
    arn = "arn:aws:batch:us-east-1:123456789012:service-environment/gpu-env"
    imported = ServiceEnvironment.from_service_environment_arn(stack, "Env", arn)
    assert (imported.service_environment_name, imported.service_environment_arn) == ("gpu-env", arn)
    with pytest.raises(ValueError, match="service-environment/NAME"):
        ServiceEnvironment.from_service_environment_arn(
            stack, "Queue", "arn:aws:batch:us-east-1:123456789012:job-queue/training")


def test_no_resource_when_imported():
    stack = Stack(fast_app(), "OnlyImport")
    ServiceEnvironment.from_service_environment_arn(
        stack, "Env", "arn:aws:batch:us-east-1:123456789012:service-environment/gpu-env")
    Template.from_stack(stack).resource_count_is("AWS::Batch::ServiceEnvironment", 0)


def test_token_names_are_left_for_deploy_time():
    from aws_cdk import Aws, Token

    from quota_constructs.validation import is_token

    assert is_token(Aws.STACK_NAME) and is_token(Token.as_number(Aws.ACCOUNT_ID))
    assert not is_token("gpu-env") and not is_token(3) and not is_token(3.0)
    stack = Stack(fast_app(), "Tokens")
    env = ServiceEnvironment(stack, "Env", service_environment_name=Aws.STACK_NAME, capacity={"ml.g5.xlarge": 1})
    assert Template.from_stack(stack).to_json()["Resources"][stack.get_logical_id(env.resource)][
        "Properties"]["ServiceEnvironmentName"] == {"Ref": "AWS::StackName"}
