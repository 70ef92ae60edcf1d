"""The detector measured on credential families: a planted set (every one must be found) and a set
of look-alikes from real provider traffic (none may be flagged), and every committed cassette and
golden passes it.

No real credential is written here: each planted value is drawn at run time from a seeded
generator, in its family's published shape."""

from __future__ import annotations

import base64
import json
import random
import string
import struct
from pathlib import Path
from typing import Any

import pytest
import yaml

from rag_core.evals.credentials import Detector

ROOT = Path(__file__).resolve().parents[1]

HEX = "0123456789abcdef"
DIGITS = string.digits
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
_rng = random.Random(20260101)


def r(alphabet: str, n: int) -> str:
    """n characters drawn from ``alphabet`` (seeded: the same on every run)."""
    return "".join(_rng.choice(alphabet) for _ in range(n))


def b64(n_bytes: int, url: bool = False) -> str:
    raw = _rng.randbytes(n_bytes)
    return (base64.urlsafe_b64encode(raw) if url else base64.b64encode(raw)).decode()


def uuid() -> str:
    return f"{r(HEX, 8)}-{r(HEX, 4)}-4{r(HEX, 3)}-a{r(HEX, 3)}-{r(HEX, 12)}"


def discord_token() -> str:
    user_id = "1" + r(DIGITS, 17)
    head = base64.urlsafe_b64encode(user_id.encode()).decode().rstrip("=")
    return f"{head}.{r(URLSAFE, 6)}.{r(URLSAFE, 38)}"


AWS_DOC_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # the example in AWS's own documentation
HEX32 = r(HEX, 32)

# (family, planted data: text or a parsed body, what the finding's kind says)
PLANTED: list[tuple[str, Any, str]] = [
    # OpenAI / Anthropic and the other sk- providers
    ("openai", "OPENAI_API_KEY=sk-proj-" + r(URLSAFE, 74) + "T3BlbkFJ" + r(URLSAFE, 74), "OpenAI-style"),
    ("openai", {"messages": [{"role": "user", "content": "my key: sk-" + r(ALNUM, 48)}]}, "OpenAI-style"),
    ("openai", {"api_key": "sk-svcacct-" + r(URLSAFE, 60)}, "OpenAI-style"),
    ("anthropic", "export ANTHROPIC_API_KEY='sk-ant-api03-" + r(URLSAFE, 93) + "AA'", "OpenAI-style"),
    ("anthropic", {"headers": {"x-api-key": "sk-ant-admin01-" + r(URLSAFE, 93) + "AA"}}, "OpenAI-style"),
    ("openrouter", "OPENROUTER_API_KEY=sk-or-v1-" + r(HEX, 64), "OpenAI-style"),
    # Google
    ("google api key", "GET https://generativelanguage.googleapis.com/v1beta/models?key=AIza" + r(URLSAFE, 35),
     "Google API key"),
    ("google api key", {"config": {"google_api_key": "AIza" + r(URLSAFE, 35)}}, "Google API key"),
    ("google oauth", {"access_token": "ya29.a0" + r(URLSAFE, 160), "token_type": "Bearer"}, "ya29"),
    ("google oauth", '{"web":{"client_id":"1234-abc.apps.googleusercontent.com","client_secret":"GOCSPX-'
     + r(URLSAFE, 28) + '"}}', "GOCSPX"),
    ("gcp service account", {"type": "service_account", "private_key_id": r(HEX, 40),
                             "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEv" + b64(60) + "\n-----END PRIVATE KEY-----\n"},
     "PEM private key"),
    ("gcs signed url", "download: https://storage.googleapis.com/bkt/report.pdf?X-Goog-Algorithm=GOOG4-RSA-SHA256"
     "&X-Goog-Credential=sa%40proj.iam.gserviceaccount.com%2F20260101%2Fauto%2Fstorage%2Fgoog4_request"
     "&X-Goog-Date=20260101T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=" + r(HEX, 512),
     "key-like field 'X-Goog-"),
    # AWS
    ("aws access key id", "aws_access_key_id = AKIA" + r(UPPER + DIGITS, 16), "AWS access key id"),
    ("aws access key id", {"Credentials": {"AccessKeyId": "ASIA" + r(UPPER + DIGITS, 16)}}, "AWS access key id"),
    ("aws secret", "env: AWS_SECRET_ACCESS_KEY=" + AWS_DOC_SECRET, "AWS secret access key"),
    ("aws secret", "[default]\naws_secret_access_key = " + r(B64, 40) + "\n", "key-like field 'aws_secret_access_key'"),
    ("aws secret", {"Credentials": {"SecretAccessKey": r(B64, 40)}}, "key-like field 'SecretAccessKey'"),
    ("aws session token", {"Credentials": {"SessionToken": "IQoJb3JpZ2luX2Vj" + b64(300)}}, "key-like field 'SessionToken'"),
    ("s3 presigned url", "url: https://bkt.s3.amazonaws.com/a.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA"
     + r(UPPER + DIGITS, 16) + "%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=" + r(HEX, 64),
     "AWS access key id"),
    # Azure
    ("azure openai key", {"api_key": HEX32}, "Azure-style key"),
    ("azure openai key", "AZURE_OPENAI_API_KEY: " + r(HEX, 32), "key-like field 'AZURE_OPENAI_API_KEY'"),
    ("azure storage", "DefaultEndpointsProtocol=https;AccountName=kitchen;AccountKey=" + b64(64)
     + ";EndpointSuffix=core.windows.net", "AccountKey"),
    ("azure service bus", "Endpoint=sb://kitchen.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
     "SharedAccessKey=" + b64(32), "SharedAccessKey"),
    ("azure ad client secret", {"tenant": "common", "clientSecret": r(ALNUM, 3) + "8Q~" + r(ALNUM + "_~.-", 34)},
     "Azure AD client secret"),
    ("azure sas", "blob: https://kitchen.blob.core.windows.net/c/menu.txt?sv=2022-11-02&ss=b&srt=o&sp=r"
     "&se=2026-01-01T00:00:00Z&spr=https&sig=" + b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"),
     "key-like field 'sig'"),
    # other model and tool providers
    ("cohere", {"cohere_api_key": r(ALNUM, 40)}, "Cohere-style key"),
    ("cohere", "CO_API_KEY=" + r(ALNUM, 40), "key-like field 'CO_API_KEY'"),
    ("mistral", "MISTRAL_API_KEY=" + r(ALNUM, 32), "key-like field 'MISTRAL_API_KEY'"),
    ("together", {"together_api_key": r(HEX, 64)}, "key-like field 'together_api_key'"),
    ("groq", "GROQ_API_KEY=gsk_" + r(ALNUM, 52), "Groq"),
    ("xai", {"api_key": "xai-" + r(ALNUM, 80)}, "xAI"),
    ("perplexity", "pplx-" + r(ALNUM, 48), "Perplexity"),
    ("replicate", "REPLICATE_API_TOKEN=r8_" + r(ALNUM, 37), "Replicate"),
    ("langsmith", "LANGSMITH_API_KEY=lsv2_pt_" + r(HEX, 32) + "_" + r(HEX, 10), "LangSmith"),
    ("pinecone", {"pinecone": {"api_key": "pcsk_" + r(ALNUM, 5) + "_" + r(ALNUM, 60)}}, "Pinecone"),
    ("tavily", "TAVILY_API_KEY=tvly-dev-" + r(ALNUM, 32), "Tavily"),
    ("elevenlabs", {"xi-api-key": "sk_" + r(HEX, 48)}, "ElevenLabs"),
    ("cerebras", "csk-" + r(ALNUM, 48), "Cerebras"),
    ("jina", "Authorization header set from JINA_API_KEY=jina_" + r(HEX, 32) + r(URLSAFE, 28), "Jina"),
    ("firecrawl", {"firecrawl_key": "fc-" + r(HEX, 32)}, "Firecrawl"),
    ("weights and biases", "WANDB_API_KEY=" + r(HEX, 40), "key-like field 'WANDB_API_KEY'"),
    ("serpapi", "https://serpapi.com/search.json?q=pad+thai&api_key=" + r(HEX, 64), "key-like field 'api_key'"),
    # payments, code hosting, package registries, chat
    ("stripe", "sk_live_" + r(ALNUM, 99), "Stripe secret key"),
    ("stripe", {"stripe_key": "rk_live_" + r(ALNUM, 99)}, "Stripe secret key"),
    ("stripe", "STRIPE_SECRET_KEY=sk_test_" + r(ALNUM, 99), "Stripe secret key"),
    ("stripe", {"webhook_secret": "whsec_" + r(ALNUM, 32)}, "Stripe webhook secret"),
    ("github", "git clone https://x-access-token:ghs_" + r(ALNUM, 36) + "@github.com/o/r.git", "GitHub token"),
    ("github", {"token": "gho_" + r(ALNUM, 36)}, "GitHub token"),
    ("github", "GH_TOKEN=github_pat_" + r(ALNUM, 22) + "_" + r(ALNUM, 59), "GitHub token"),
    ("gitlab", "PRIVATE-TOKEN: glpat-" + r(URLSAFE, 20), "GitLab token"),
    ("gitlab", {"runner": {"token": "glrt-" + r(URLSAFE, 20)}}, "GitLab token"),
    ("gitlab", "registration token GR1348941" + r(URLSAFE, 20), "GitLab token"),
    ("gitlab", "deploy: gldt-" + r(URLSAFE, 20), "GitLab token"),
    ("hugging face", "HF_TOKEN=hf_" + r(string.ascii_letters, 34), "Hugging Face"),
    ("npm", "//registry.npmjs.org/:_authToken=npm_" + r(ALNUM, 36), "npm token"),
    ("npm", "//npm.pkg.github.com/:_authToken=" + uuid(), "key-like field '_authToken'"),
    ("pypi", "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 120), "PyPI token"),
    ("pypi", "TWINE_PASSWORD=pypi-AgENdGVzdC5weXBpLm9yZw" + r(URLSAFE, 120), "PyPI token"),
    ("slack", {"text": "use xoxb-" + r(DIGITS, 12) + "-" + r(DIGITS, 13) + "-" + r(ALNUM, 24)}, "Slack token"),
    ("slack", "xoxp-" + r(DIGITS, 12) + "-" + r(DIGITS, 12) + "-" + r(DIGITS, 12) + "-" + r(HEX, 32), "Slack token"),
    ("slack", "SLACK_APP_TOKEN=xapp-1-A" + r(UPPER + DIGITS, 10) + "-" + r(DIGITS, 13) + "-" + r(HEX, 64), "Slack token"),
    ("slack webhook", {"url": "https://hooks.slack.com/services/T" + r(UPPER + DIGITS, 8) + "/B" + r(UPPER + DIGITS, 10)
                       + "/" + r(ALNUM, 24)}, "Slack webhook"),
    ("sendgrid", "SENDGRID_API_KEY=SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43), "SendGrid"),
    ("twilio", "TWILIO_API_KEY=SK" + r(HEX, 32), "Twilio API key"),
    ("twilio", "TWILIO_AUTH_TOKEN=" + r(HEX, 32), "key-like field 'TWILIO_AUTH_TOKEN'"),
    ("discord", "DISCORD_BOT: " + discord_token(), "Discord bot token"),
    ("discord", {"content": "bot token " + discord_token() + " for the pantry bot"}, "Discord bot token"),
    ("telegram", "https://api.telegram.org/bot" + r(DIGITS, 10) + ":AA" + r(URLSAFE, 33) + "/getMe", "Telegram bot token"),
    ("telegram", {"telegram": r(DIGITS, 9) + ":AA" + r(URLSAFE, 33)}, "Telegram bot token"),
    ("databricks", "DATABRICKS_TOKEN=dapi" + r(HEX, 32), "Databricks"),
    ("databricks", {"host": "https://adb-1.azuredatabricks.net", "tok": "dapi" + r(HEX, 32) + "-2"}, "Databricks"),
    ("shopify", "X-Shopify-Access-Token: shpat_" + r(HEX, 32), "Shopify"),
    ("shopify", {"shared": "shpss_" + r(HEX, 32)}, "Shopify"),
    ("digitalocean", "DIGITALOCEAN_TOKEN=dop_v1_" + r(HEX, 64), "DigitalOcean"),
    ("mailchimp", {"mc": r(HEX, 32) + "-us21"}, "Mailchimp"),
    ("sentry", "SENTRY_AUTH_TOKEN=sntryu_" + r(HEX, 64), "Sentry"),
    ("square", "sq0atp-" + r(URLSAFE, 22), "Square"),
    ("linear", {"linear": "lin_api_" + r(ALNUM, 40)}, "Linear"),
    ("notion", "NOTION_TOKEN=ntn_" + r(DIGITS, 11) + r(ALNUM, 35), "Notion"),
    ("postman", "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34), "Postman"),
    ("doppler", "DOPPLER_TOKEN=dp.pt." + r(ALNUM, 43), "Doppler"),
    ("vault", "VAULT_TOKEN=hvs." + r(URLSAFE, 95), "Vault"),
    ("terraform", {"credentials": {"app.terraform.io": {"tk": r(ALNUM, 14) + ".atlasv1." + r(ALNUM, 67)}}}, "Terraform"),
    ("atlassian", "JIRA_API_TOKEN=ATATT3" + r(URLSAFE, 186), "Atlassian"),
    ("age", "AGE-SECRET-KEY-1" + r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58), "age secret key"),
    ("heroku", "HRKU-AA" + r(URLSAFE, 58), "Heroku"),
    ("grafana", "GRAFANA_SA=glsa_" + r(ALNUM, 32) + "_" + r(HEX, 8), "Grafana"),
    ("alibaba", {"ak": "LTAI" + r(ALNUM, 20)}, "Alibaba"),
    ("supabase", "SUPABASE_ACCESS_TOKEN=sbp_" + r(HEX, 40), "Supabase"),
    ("mapbox", "MAPBOX=sk.eyJ1Ijoi" + r(URLSAFE, 40) + "." + r(URLSAFE, 22), "Mapbox"),
    ("1password", "OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ" + b64(120).rstrip("="), "1Password"),
    # RAG stacks' keys that the ruleset has no rule for, and Mailgun's without a "mailgun" name before them
    ("llamacloud", {"content": "the parser key is llx-" + r(ALNUM, 48)}, "LlamaCloud"),
    ("voyage", {"messages": [{"role": "user", "content": "embed with pa-" + r(URLSAFE, 43)}]}, "Voyage AI"),
    ("fireworks", "FIREWORKS_API_KEY=fw_" + r(ALNUM, 24), "Fireworks AI"),
    ("mailgun", {"output": "send with key-" + r(HEX, 32)}, "Mailgun API key"),
    ("mailgun", f"signing: {r(HEX, 32)}-{r(HEX, 8)}-{r(HEX, 8)}", "Mailgun key"),
    # found by the ruleset's rules alone (gitleaks)
    ("brevo", {"content": "xkeysib-" + r(HEX, 64) + "-" + r(ALNUM, 16)}, "rule 'sendinblue-api-token'"),
    ("pulumi", "PULUMI_ACCESS_TOKEN=pul-" + r(HEX, 40), "rule 'pulumi-api-token'"),
    ("prefect", {"api_key": "pnu_" + r(ALNUM, 36)}, "rule 'prefect-api-token'"),
    ("planetscale", {"env": "DATABASE_PASSWORD='pscale_pw_" + r(URLSAFE, 43) + "'"}, "rule 'planetscale-password'"),
    ("dynatrace", "DT_API_TOKEN=dt0c01." + r(UPPER + DIGITS, 24) + "." + r(UPPER + DIGITS, 64), "rule 'dynatrace-api-token'"),
    ("new relic", "NEW_RELIC_USER_KEY=NRAK-" + r(UPPER + DIGITS, 27), "rule 'new-relic-user-api-key'"),
    ("fly.io", "FLY_API_TOKEN=fo1_" + r(URLSAFE, 43), "rule 'flyio-access-token'"),
    # JWTs, bearer and basic credentials
    ("jwt", {"id_token": "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiI" + r(URLSAFE, 40) + "." + r(URLSAFE, 86)}, "JSON Web Token"),
    ("bearer", "curl -H 'Authorization: Bearer " + r(ALNUM, 20) + "." + r(ALNUM, 12) + "'", "bearer token"),
    ("basic", "Proxy-Authorization: Basic " + base64.b64encode(b"chef:" + r(ALNUM, 12).encode()).decode(), "basic-auth"),
    ("docker auth", {"auths": {"registry.example.com": {"auth": base64.b64encode(b"chef:" + r(ALNUM, 10).encode()).decode()}}},
     "basic-auth credential"),
    # private keys
    ("pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + b64(90) + "\n-----END RSA PRIVATE KEY-----", "PEM private key"),
    ("pem", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" + b64(60), "PEM private key"),
    ("pem", "-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEE" + b64(40), "PEM private key"),
    ("pem", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFH" + b64(60), "PEM private key"),
    ("pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF" + b64(90) + "\n-----END PGP PRIVATE KEY BLOCK-----",
     "PGP private key block"),
    ("putty", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n" + b64(48), "PuTTY"),
    # passwords: in URLs, connection strings, JSON, flags
    ("url password", "DATABASE_URL=postgresql://app:" + r(ALNUM, 16) + "@db.internal:5432/app", "password in a URL"),
    ("url password", "redis://:" + r(ALNUM, 16) + "@cache.internal:6379/0", "password in a URL"),
    ("connection string", "Server=tcp:kitchen.database.windows.net,1433;Initial Catalog=menu;User ID=app;Password="
     + r(ALNUM, 10) + "7!;Encrypt=True;", "a password in the key-like field 'Password'"),
    ("connection string", "Driver={MySQL ODBC 8.0};Server=db;Database=menu;Uid=app;Pwd=" + r(ALNUM, 12) + "9;",
     "a password in the key-like field 'Pwd'"),
    ("connection string", "jdbc:postgresql://db:5432/menu?user=app&password=" + r(ALNUM, 14) + "3",
     "a password in the key-like field 'password'"),
    ("password field", {"username": "chef", "password": r(ALNUM, 10) + "4#"}, "a password in the key-like field 'password'"),
    ("password field", "run: mysql --password=" + r(ALNUM, 10) + "5 menu", "a password in the key-like field 'password'"),
    # OAuth token responses and *_token / *_secret fields in JSON bodies
    ("oauth", {"access_token": r(URLSAFE, 43), "token_type": "bearer", "expires_in": 3600}, "key-like field 'access_token'"),
    ("oauth", {"refresh_token": "1//0g" + r(URLSAFE, 98), "scope": "openid"}, "key-like field 'refresh_token'"),
    ("oauth", '{"access_token":"' + r(ALNUM, 40) + '","refresh_token":"' + r(ALNUM, 40) + '"}', "key-like field"),
    ("oauth", "grant_type=refresh_token&refresh_token=" + r(URLSAFE, 60) + "&client_id=abc",
     "key-like field 'refresh_token'"),
    ("json token field", {"bot_token": r(ALNUM, 24) + r(DIGITS, 4)}, "key-like field 'bot_token'"),
    ("json token field", {"integration": {"personalAccessToken": r(ALNUM, 40)}}, "key-like field 'personalAccessToken'"),
    ("json secret field", {"client_secret": r(URLSAFE, 32)}, "key-like field 'client_secret'"),
    ("json secret field", {"signing_secret": r(HEX, 32)}, "key-like field 'signing_secret'"),
    ("json secret field", '{\\"app_secret\\": \\"' + r(ALNUM, 32) + '\\"}', "key-like field 'app_secret'"),
    ("header in text", "X-API-Key: " + uuid(), "key-like field 'X-API-Key'"),
    ("query token", "GET https://gitlab.example.com/api/v4/projects?private_token=" + r(ALNUM, 20) + "7",
     "key-like field 'private_token'"),
    ("query token", "see https://graph.example.com/me?fields=id&access_token=EAAB" + r(ALNUM, 100),
     "key-like field 'access_token'"),
    # hex keys in prose
    ("prose hex key", "The key is " + r(HEX, 32) + ".", "after 'key is/for"),
    ("prose hex key", "Here is the API key for the staging project: " + r(HEX, 32), "after 'key is/for"),
    ("prose hex key", {"content": "my secret is " + r(ALNUM, 30) + "9"}, "after 'secret is/for"),
]


def _float_base64(n: int) -> str:
    return base64.b64encode(struct.pack(f"<{n}f", *(_rng.uniform(-0.2, 0.2) for _ in range(n)))).decode()


def _sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n" for e in events)


# look-alikes from real provider traffic: ids, signatures, encrypted reasoning, embeddings, digests
LOOK_ALIKES: list[tuple[str, Any]] = [
    ("chat completion id", {"id": "chatcmpl-" + r(ALNUM, 29), "object": "chat.completion",
                            "system_fingerprint": "fp_" + r(HEX, 10)}),
    ("response id", {"id": "resp_" + r(HEX, 48), "previous_response_id": "resp_" + r(HEX, 48)}),
    ("message id", {"id": "msg_01" + r(ALNUM, 22), "type": "message", "stop_sequence": None}),
    ("tool use id", {"type": "tool_use", "id": "toolu_01" + r(ALNUM, 22), "name": "search", "input": {"query": "pad thai"}}),
    ("tool result id", {"type": "tool_result", "tool_use_id": "toolu_01" + r(ALNUM, 22), "content": "found 3 recipes"}),
    ("call id", {"type": "function_call_output", "call_id": "call_" + r(ALNUM, 24), "output": "ok"}),
    ("chat tool call", {"tool_calls": [{"id": "call_" + r(ALNUM, 24), "type": "function",
                                        "function": {"name": "search", "arguments": '{"term":"tamarind"}'}}]}),
    ("function call item", {"type": "function_call", "id": "fc_" + r(HEX, 48), "call_id": "call_" + r(ALNUM, 24)}),
    ("reasoning item", {"type": "reasoning", "id": "rs_" + r(HEX, 48), "summary": [],
                        "encrypted_content": "gAAAAAB" + b64(1500, url=True)}),
    ("encrypted_content 40 KB", {"type": "reasoning", "encrypted_content": "gAAAAAB" + b64(30000, url=True)}),
    ("encrypted_content in SSE", _sse({"type": "response.output_item.done", "sequence_number": 4,
                                       "item": {"type": "reasoning", "id": "rs_" + r(HEX, 48),
                                                "encrypted_content": "gAAAAAB" + b64(2000, url=True)}})),
    ("gemini thought signature", {"parts": [{"text": "Let me look.", "thoughtSignature": b64(300)}]}),
    ("gemini thought signature in text", "thoughtSignature: " + b64(120)),
    ("anthropic thinking signature", {"type": "thinking", "thinking": "The user wants…", "signature": "Eq" + b64(400)}),
    ("anthropic signature delta", _sse({"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "signature_delta", "signature": "Eq" + b64(300)}})),
    ("anthropic redacted thinking", {"type": "redacted_thinking", "data": "EmwKAhgB" + b64(600)}),
    ("openai base64 embedding", {"object": "list", "data": [{"object": "embedding", "index": 0,
                                                             "embedding": _float_base64(1536)}]}),
    ("gemini inline image", {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo" + b64(6000)}}),
    ("anthropic pdf block", {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                           "data": "JVBERi0xLjQK" + b64(3000)}}),
    ("data url", {"image_url": {"url": "data:image/jpeg;base64,/9j/4AAQSkZJRg" + b64(2000)}}),
    ("request ids", {"x-request-id": "req_" + r(HEX, 32), "request-id": "req_011C" + r(ALNUM, 20),
                     "x-amzn-requestid": uuid(), "cf-ray": r(HEX, 16) + "-SJC"}),
    ("sha256 digest", {"digest": "sha256:" + r(HEX, 64), "content_hash": r(HEX, 64)}),
    ("script digest line", "script: sha256:" + r(HEX, 16) + "\nrecorded_with: {sdk: openai 3.1.0}"),
    ("etag", {"etag": '"' + r(HEX, 32) + '"', "last-modified": "Tue, 01 Jan 2026 00:00:00 GMT"}),
    ("gemini response id", {"responseId": r(ALNUM, 22), "modelVersion": "gemini-2.5-flash"}),
    ("prompt cache key", {"prompt_cache_key": "agents-sdk:run:" + r(HEX, 32)}),
    ("prompt cache key hash", {"prompt_cache_key": r(HEX, 64)}),
    ("idempotency key", {"idempotency_key": uuid()}),
    ("page token", {"files": [], "nextPageToken": b64(60, url=True)}),
    ("usage counts", {"usage": {"input_tokens": 52, "output_tokens": 128, "cache_read_input_tokens": 0,
                                "output_tokens_details": {"reasoning_tokens": 64}}}),
    ("usage in SSE", _sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 42}})),
    ("gemini usage", {"usageMetadata": {"promptTokenCount": 9, "thoughtsTokenCount": 120, "cachedContentTokenCount": 0}}),
    ("max tokens text", "max_tokens: 1024\nmax_output_tokens=2048\nbudget_tokens: 10000"),
    ("logprobs", {"logprobs": {"content": [{"token": "Hello", "logprob": -0.31, "bytes": [72, 101, 108, 108, 111]}]}}),
    ("trace context", {"traceparent": f"00-{r(HEX, 32)}-{r(HEX, 16)}-01", "trace_id": r(HEX, 32), "span_id": r(HEX, 16)}),
    ("uuids", {"id": uuid(), "generation_id": uuid(), "run_id": uuid()}),
    ("openai object ids", {"file_id": "file-" + r(ALNUM, 22), "vector_store_id": "vs_" + r(ALNUM, 24),
                           "assistant_id": "asst_" + r(ALNUM, 24), "batch": "batch_" + r(HEX, 32)}),
    ("mistral id", {"id": "cmpl-" + r(HEX, 32), "object": "chat.completion"}),
    ("organization and project", {"organization": "org-" + r(ALNUM, 24), "project": "proj_" + r(ALNUM, 24)}),
    ("model names", {"model": "ft:gpt-4o-mini-2024-07-18:kitchen:menu:" + r(ALNUM, 8),
                     "fallbacks": ["claude-sonnet-4-5-20250929", "gemini-2.5-flash", "gpt-4o-2024-08-06"]}),
    ("azure api-version URL", "POST https://kitchen.openai.azure.com/openai/deployments/gpt-4o/chat/completions"
     "?api-version=2024-10-21"),
    ("gemini stream URL",
     "POST https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
    ("gemini file uri", {"fileData": {"fileUri": "https://generativelanguage.googleapis.com/v1beta/files/" + r(HEX, 12)}}),
    ("anthropic container", {"container": {"id": "container_011C" + r(ALNUM, 20), "expires_at": "2026-01-01T00:00:00Z"}}),
    ("streaming obfuscation", _sse({"type": "response.output_text.delta", "item_id": "msg_" + r(HEX, 48),
                                    "delta": "Pad", "obfuscation": r(ALNUM, 13)})),
    ("token type", {"token_type": "Bearer", "expires_in": 3599, "scope": "https://www.googleapis.com/auth/cloud-platform"}),
    ("key/value pairs", {"metadata": [{"key": "cuisine", "value": "thai"}, {"key": "course", "value": "main"}]}),
    ("document ids", {"document_id": r(HEX, 32), "doc_key": r(HEX, 64), "chunk_key": r(HEX, 40)}),
    ("embedding cache keys", "\n".join(r(HEX, 32) for _ in range(20))),
    ("prose", "Pad thai is a bearer of tradition; the secret is tamarind, and the key is to toast the peanuts first."),
    ("prose about passwords", "Reset your password from the settings page; a password: must have 12 characters."),
    ("prose with cache key", "the cache_key is " + r(HEX, 32)),
    ("stripe-like words", "Ask-me-anything: risk-free task-management skills for kitchen staff"),
    ("shell output", "PWD=/home/chef/kitchen\nOLDPWD=/home/chef\nSHELL=/bin/bash"),
    ("words after short prefixes", "hire a pa-system-for-the-kitchen-party-tonight; fw_version fw_2024_10; "
                                   "key-value-store; the llx-series"),
    ("hex groups", {"trace": f"{r(HEX, 32)}-{r(HEX, 8)}", "etag": f"W/{r(HEX, 32)}-{r(HEX, 8)}-{r(HEX, 8)}-{r(HEX, 4)}"}),
    ("placeholders", {"api_key": "<scrubbed>", "password": "********", "token": "${OPENAI_API_KEY}",
                      "secret": "os.environ/OPENAI_API_KEY", "client_secret": "your-client-secret-here"}),
]


def _families() -> set[str]:
    return {family for family, _, _ in PLANTED}


def test_the_planted_and_look_alike_sets_are_as_large_as_the_report_says():
    assert len(PLANTED) >= 80
    assert len(_families()) >= 30
    assert len(LOOK_ALIKES) >= 40
    assert len({label for label, _ in LOOK_ALIKES}) == len(LOOK_ALIKES)


@pytest.mark.parametrize(("family", "data", "kind"), PLANTED, ids=[f"{i:03d}-{f}" for i, (f, _, _) in enumerate(PLANTED)])
def test_every_planted_credential_is_found(family, data, kind):
    findings = Detector().find(data)
    assert findings, f"{family}: nothing found in {data!r}"
    assert any(kind in finding.kind for finding in findings), [str(f) for f in findings]


@pytest.mark.parametrize(("label", "data"), LOOK_ALIKES, ids=[label for label, _ in LOOK_ALIKES])
def test_no_look_alike_from_provider_traffic_is_flagged(label, data):
    assert Detector().find(data) == []
    # the same, as the text of a JSON body and of a YAML file (goldens are checked as text)
    if not isinstance(data, str):
        assert Detector().find(json.dumps(data)) == []
        assert Detector().find(yaml.safe_dump(data, width=1000)) == []


def _committed_files() -> list[Path]:
    return sorted(p for folder in ("cassettes", "fixtures/goldens") for p in (ROOT / folder).rglob("*")
                  if p.is_file() and p.suffix in (".yaml", ".json", ".txt"))


def test_every_committed_cassette_and_golden_passes_the_detector():
    files = _committed_files()
    assert len(files) > 50
    flagged = {}
    for path in files:
        text = path.read_text(errors="replace")
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if path.suffix != ".txt" else text
        findings = Detector().find(data) + Detector().find(text)
        if findings:
            flagged[str(path.relative_to(ROOT))] = [str(f) for f in findings[:5]]
    assert not flagged, flagged
