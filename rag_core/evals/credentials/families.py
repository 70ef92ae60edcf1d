"""Well-known credential families by their shape: provider keys, cloud and CI tokens, private key
blocks, webhooks…, and the keys of RAG stacks gitleaks' rules lack (``secret_rules`` has those
rules). Each family runs only where one of its hints is in the text (``family_index``)."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Callable, Iterable

from rag_core.evals.credentials.token_bounds import DIFF_MARK as _DIFF_MARK
from rag_core.evals.credentials.token_bounds import END as _E
from rag_core.evals.credentials.token_bounds import START as _B
from rag_core.evals.credentials.values import entropy


def _discord_user_id(match: re.Match[str]) -> bool:
    """A Discord bot token starts with its bot's user id (17 to 20 digits) in base64."""
    head = match.group(0).split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return decoded.isdigit() and 17 <= len(decoded) <= 20


def _random_after_prefix(match: re.Match[str]) -> bool:
    """What follows a short prefix (llx-, pa-, fw_) looks random: letters and digits, entropy ≥ 3 bits."""
    rest = match.group(0)[3:].lstrip("-_")
    return (any(c.isdigit() for c in rest) and any(c.isalpha() for c in rest)
            and entropy(rest) >= 3.0)


_MAILGUN_HEAD = re.compile(_B + r"[0-9a-f]{32}")


def _mailgun_head(match: re.Match[str]) -> bool:
    """32 hex digits, where a token starts, before the "-<8 hex>-<8 hex>" tail."""
    start = match.start() - 32
    return start >= 0 and _MAILGUN_HEAD.match(match.string, start, match.start()) is not None


@dataclass(frozen=True)
class Family:
    kind: str
    pattern: re.Pattern[str]
    # the rule runs only where one of these is in the text (lower-case ones: in the lower-cased text)
    hints: tuple[str, ...] = ()
    verify: Callable[[re.Match[str]], bool] | None = None
    # where a hint stands in a match: the pattern is tried only that far before each hint; None:
    # the hint stands nowhere fixed, and the pattern searches the whole text
    offset: int | None = 0

    def found_in(self, text: str, lowered: str) -> bool:
        if self.hints and not any(hint in (lowered if hint == hint.lower() else text) for hint in self.hints):
            return False
        if self.offset is None or len(lowered) != len(text):
            matches: Iterable[re.Match[str] | None] = self.pattern.finditer(text)
        else:
            matches = (self.pattern.match(text, start - self.offset) for start in self._starts(text, lowered)
                       if start >= self.offset)
        return any(match is not None and (self.verify is None or self.verify(match)) for match in matches)

    def _starts(self, text: str, lowered: str) -> Iterable[int]:
        for hint in self.hints:
            haystack = lowered if hint == hint.lower() else text
            start = haystack.find(hint)
            while start >= 0:
                yield start
                start = haystack.find(hint, start + 1)


def _family(kind: str, pattern: str, *hints: str, verify: Callable[[re.Match[str]], bool] | None = None,
            offset: int | None = 0) -> Family:
    return Family(kind, re.compile(pattern), hints, verify, offset)


# Well-known credential families by their shape. The shapes follow gitleaks' published rule set
# (config/gitleaks.toml: the rules of the same names), written for Python's re with the boundaries
# and bounded runs that keep them linear and keep them off base64 blobs and provider ids.
FAMILIES: tuple[Family, ...] = (
    _family("an OpenAI-style key (sk-…)", _B + r"sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}", "sk-"),
    _family("a Google API key (AIza…)", _B + r"AIza[0-9A-Za-z_-]{35}" + _E, "aiza"),
    _family("a Google OAuth access token (ya29.…)", _B + r"ya29\.[0-9A-Za-z_-]{20,}", "ya29."),
    _family("a Google OAuth client secret (GOCSPX-…)", r"GOCSPX-[0-9A-Za-z_-]{24,}", "GOCSPX-"),
    _family("a Stripe secret key (sk_live_/rk_live_/…_test_)", _B + r"[rs]k_(?:live|test|prod)_[0-9A-Za-z]{10,}",
            "sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_"),
    _family("a Stripe webhook secret (whsec_…)", _B + r"whsec_[A-Za-z0-9+/=]{24,}", "whsec_"),
    _family("a GitHub token", _B + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
            "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    _family("a GitLab token (glpat-…)",
            _B + r"(?:gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas|ffct)-[0-9A-Za-z_-]{20,}|GR1348941[0-9A-Za-z_-]{20,})",
            "glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-",
            "glffct-", "GR1348941"),
    _family("a Hugging Face token (hf_…)", _B + r"(?:hf|api_org)_[A-Za-z0-9]{30,}", "hf_", "api_org_"),
    _family("a Slack token (xox…)", _B + r"(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}", "xox", "xapp-"),
    _family("a Slack webhook URL", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{30,}",
            "hooks.slack.com/"),
    _family("an AWS access key id", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AGPA)[0-9A-Z]{16}\b",
            "A3T", "AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA", "AGPA"),
    _family("a JSON Web Token", _B + r"eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}", "eyJ"),
    # a bearer credential has at least one character that is not a letter, so prose ("bearer bonds") passes
    _family("a bearer token (Bearer …)", r"\b[Bb]earer\s++(?=[A-Za-z]*+[0-9._~+/=-])[A-Za-z0-9._~+/=-]{12,}", "bearer"),
    _family("a PEM private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----", "-----BEGIN"),
    _family("a PGP private key block", r"-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----BEGIN PGP"),
    _family("a PuTTY private key", r"PuTTY-User-Key-File-\d+:", "PuTTY-User-Key-File-"),
    _family("a password in a URL (user:password@)",
            r"(?:(?<![A-Za-z0-9+.\-])|" + _DIFF_MARK + r")[A-Za-z][A-Za-z0-9+.\-]{0,31}+://[^/\s:@\"']*+:[^/\s@\"']++@",
            "://", offset=None),
    _family("an npm token (npm_…)", _B + r"npm_[A-Za-z0-9]{36}" + _E, "npm_"),
    _family("a PyPI token (pypi-…)", _B + r"pypi-AgE[A-Za-z0-9_-]{50,}", "pypi-AgE"),
    _family("a SendGrid API key (SG.…)", _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E, "SG."),
    _family("a Twilio API key (SK…)", _B + r"SK[0-9a-fA-F]{32}" + _E, "SK"),
    _family("a Discord bot token", _B + r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _E,
            ".", verify=_discord_user_id, offset=None),
    _family("a Telegram bot token", r"(?:(?<=/bot)|(?<![\w:]))\d{8,10}:AA[A-Za-z0-9_-]{33}" + _E, ":AA", offset=None),
    _family("an Azure storage account key (AccountKey=…)", r"(?i:AccountKey)=[A-Za-z0-9+/]{80,}", "accountkey="),
    _family("an Azure shared access key (SharedAccessKey=…)", r"(?i:SharedAccessKey)=[A-Za-z0-9+/]{40,}",
            "sharedaccesskey="),
    _family("an Azure AD client secret (…Q~…)",
            r"(?:(?<![A-Za-z0-9_~.\-])|" + _DIFF_MARK + r")[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
            "Q~", offset=4),
    _family("a Databricks token (dapi…)", _B + r"dapi[0-9a-f]{32}(?:-\d)?" + _E, "dapi"),
    _family("a Shopify token (shpat_…)", _B + r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}" + _E,
            "shpat_", "shpss_", "shpca_", "shppa_"),
    _family("a DigitalOcean token (dop_v1_…)", _B + r"do[opr]_v1_[0-9a-f]{64}" + _E, "dop_v1_", "doo_v1_", "dor_v1_"),
    _family("a Groq API key (gsk_…)", _B + r"gsk_[A-Za-z0-9]{40,}", "gsk_"),
    _family("an xAI API key (xai-…)", _B + r"xai-[A-Za-z0-9]{60,}", "xai-"),
    _family("a Perplexity API key (pplx-…)", _B + r"pplx-[A-Za-z0-9]{40,}", "pplx-"),
    _family("a Replicate token (r8_…)", _B + r"r8_[A-Za-z0-9]{30,}", "r8_"),
    _family("a LangSmith key (lsv2_…)", _B + r"lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}", "lsv2_"),
    _family("a Pinecone API key (pcsk_…)", _B + r"pcsk_[A-Za-z0-9]{4,10}_[A-Za-z0-9]{40,}", "pcsk_"),
    _family("a Tavily API key (tvly-…)", _B + r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}", "tvly-"),
    _family("an ElevenLabs API key (sk_…)", _B + r"sk_[0-9a-f]{48}" + _E, "sk_"),
    _family("a Cerebras API key (csk-…)", _B + r"csk-[A-Za-z0-9]{40,}", "csk-"),
    _family("a Jina API key (jina_…)", _B + r"jina_[A-Za-z0-9_-]{40,}", "jina_"),
    _family("a Firecrawl API key (fc-…)", _B + r"fc-[0-9a-f]{32}" + _E, "fc-"),
    _family("a Linear API key (lin_api_…)", _B + r"lin_api_[A-Za-z0-9]{40}", "lin_api_"),
    _family("a Notion token (ntn_/secret_…)", _B + r"(?:ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + _E,
            "ntn_", "secret_"),
    _family("a Postman API key (PMAK-…)", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}", "PMAK-"),
    _family("a Doppler token (dp.pt.…)", _B + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", "dp."),
    _family("a HashiCorp Vault token (hvs.…)", _B + r"hv[sb]\.[A-Za-z0-9_-]{90,}", "hvs.", "hvb."),
    _family("a Terraform Cloud token (….atlasv1.…)", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", "atlasv1", offset=15),
    _family("an Atlassian API token (ATATT3…)", _B + r"ATATT3[A-Za-z0-9_=-]{150,}", "ATATT3"),
    _family("a Mailchimp API key", _B + r"[0-9a-f]{32}-us\d{1,2}" + _E, "-us", offset=32),
    _family("a Sentry token (sntrys_/sntryu_…)", _B + r"sntry[su]_[A-Za-z0-9+/=_]{60,}", "sntry"),
    _family("a Square token (sq0atp-…)", _B + r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", "sq0atp-", "sq0csp-"),
    _family("an age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", "AGE-SECRET-KEY-1"),
    _family("a Heroku API key (HRKU-…)", r"HRKU-AA[0-9A-Za-z_-]{58}", "HRKU-"),
    _family("a Grafana token (glc_/glsa_…)", _B + r"(?:glc_[A-Za-z0-9+/]{32,}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
            "glc_", "glsa_"),
    _family("an Alibaba Cloud access key id (LTAI…)", _B + r"LTAI[A-Za-z0-9]{20}" + _E, "LTAI"),
    _family("a Supabase key (sbp_/sb_secret_…)", _B + r"(?:sbp_[0-9a-f]{40}|sb_secret_[A-Za-z0-9_-]{20,})",
            "sbp_", "sb_secret_"),
    _family("a Mapbox secret token (sk.eyJ…)", _B + r"sk\.eyJ[A-Za-z0-9_-]{20,}+\.[A-Za-z0-9_-]{10,}", "sk.eyJ"),
    _family("a 1Password service-account token (ops_…)", _B + r"ops_eyJ[A-Za-z0-9+/]{100,}", "ops_eyJ"),
    # Keys of RAG stacks that gitleaks' rules (secret_rules, version 8.30.1) have no rule for:
    # LlamaCloud, Voyage AI and Fireworks AI. Their prefixes are short words, so the rest must look
    # random (letters and digits, 3+ bits of entropy): "pa-" opens slugs too.
    _family("a LlamaCloud API key (llx-…)", _B + r"llx-[A-Za-z0-9]{20,}+", "llx-", verify=_random_after_prefix),
    _family("a Voyage AI API key (pa-…)", _B + r"pa-[A-Za-z0-9_-]{32,}+", "pa-", verify=_random_after_prefix),
    _family("a Fireworks AI API key (fw_…)", _B + r"fw_[A-Za-z0-9]{20,}+", "fw_", verify=_random_after_prefix),
    # Mailgun's keys: gitleaks' rules find them only after a name holding "mailgun" (mailgun_key=…);
    # a bare key in a prompt or a tool's output is found by its shape: the private API key
    # (key-<32 hex>) and the newer form of private and webhook signing keys (<32 hex>-<8>-<8>).
    _family("a Mailgun API key (key-…)", _B + r"key-[0-9a-f]{32}" + _E, "key-"),
    # (searched from its "-<8>-<8>" tail, a literal "-" the search skips to, then its head checked:
    # starting at every hex digit of a text was a fifth of a 5 MB scan)
    _family("a Mailgun key (<32 hex>-<8 hex>-<8 hex>)", r"-[0-9a-f]{8}-[0-9a-f]{8}" + _E,
            verify=_mailgun_head, offset=None),
)
