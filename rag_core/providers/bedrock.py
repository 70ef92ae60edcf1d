"""AWS Bedrock's Converse API (``bedrock-runtime`` through boto3): which API a path is, and the
credentials boto3 signs its requests with (SigV4). No core model class uses it yet."""

from __future__ import annotations

from rag_core.providers.base import Provider, path_of

# boto3 needs a region to sign for and send to: botocore reads AWS_DEFAULT_REGION, other AWS
# clients AWS_REGION
REGION_VARIABLES = ("AWS_DEFAULT_REGION", "AWS_REGION")
# naming a profile names a region too (in its config)
PROFILE_VARIABLES = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE")


def route(path: str) -> str | None:
    path = path_of(path)
    if "/model/" not in path:
        return None
    if path.endswith("/converse"):
        return "bedrock-converse"
    if path.endswith("/converse-stream"):
        return "bedrock-converse-stream"
    return None


BEDROCK = Provider(
    # any of these is the user's own way of naming AWS credentials
    name="bedrock",
    key_variables=("AWS_ACCESS_KEY_ID", *PROFILE_VARIABLES, "AWS_BEARER_TOKEN_BEDROCK", "AWS_WEB_IDENTITY_TOKEN_FILE",
                   "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"),
    endpoint_variables=("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_ENDPOINT_URL"),
    default_base_url="https://bedrock-runtime.<region>.amazonaws.com", route=route,
    model_apis=("bedrock-converse", "bedrock-converse-stream"),
    apis=("bedrock-converse", "bedrock-converse-stream"), sdk_packages=("boto3", "botocore"),
    credential_headers=("authorization", "x-amz-security-token"),
    # a key pair, since boto3 signs with both halves (a region is set apart: see REGION_VARIABLES)
    dummy_environment={"AWS_ACCESS_KEY_ID": "rag-core-replay-key", "AWS_SECRET_ACCESS_KEY": "rag-core-replay-key"},
)
