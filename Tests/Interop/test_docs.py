"""The documentation holds to the code, so neither can drift from the other:

- every relative link (and its #anchor) in README.md, docs/ and CONTRIBUTING.md resolves;
- README.md is short (at most 300 lines, 16,000 bytes) and links to every page under docs/;
- docs/cli.md has a section for every command and, in it, exactly the options and environment
  variables that command's `--help` names; the CLI reads no variable its help leaves out;
- docs/control-api.md lists exactly the routes (path and method) of Contract/openapi.json;
- docs/scenario.md names every key a scenario file may hold;
- BENCHMARKS.md is at most 200 lines and opens with its table.

(test_readme.py runs the code blocks of the same pages.)
"""
import json
import re
import subprocess

import pytest

from conftest import BINARY, ROOT

DOCS = ROOT / "docs"
KIT_PAGES = sorted((ROOT / "integrations").glob("*/README.md"))
LINKED = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md")), *KIT_PAGES]
FENCE = re.compile(r"^(```+|~~~+)")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def prose(text, code_spans=False):
    """`text` without its fenced blocks and (unless `code_spans`) inline code spans: links there
    are examples."""
    kept, fence = [], None
    for line in text.splitlines():
        match = FENCE.match(line.strip())
        if fence:
            if match and line.strip().startswith(fence):
                fence = None
            kept.append("")
            continue
        if match:
            fence = match.group(1)
            kept.append("")
            continue
        kept.append(line if code_spans else re.sub(r"(`+)(?:(?!\1).)+\1", "", line))
    return "\n".join(kept)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    """Every anchor of a Markdown page: its headings' slugs (numbered when repeated) and <a id>."""
    found, seen = set(), {}
    text = path.read_text()
    for line in prose(text, code_spans=True).splitlines():
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            found.add(base if count == 0 else f"{base}-{count}")
            seen[base] = count + 1
    found.update(HTML_ANCHOR.findall(text))
    return found


def shown(path):
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def dead_links(path):
    """The relative links of `path` that lead nowhere: a missing file, or a missing #anchor."""
    dead = []
    text = prose(path.read_text())
    # Over the whole text, not line by line: a link's words may wrap onto the next line.
    for match in LINK.finditer(text):
        target, number = match.group(1), text.count("\n", 0, match.start(1)) + 1
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # http:, https:, mailto:
        file, _, fragment = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists():
            dead.append(f"{shown(path)}:{number}: {target} (no such file)")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            dead.append(f"{shown(path)}:{number}: {target} (no such anchor in {resolved.name})")
    return dead


@pytest.mark.parametrize("path", [path for path in LINKED if path.exists()], ids=lambda path: str(path.relative_to(ROOT)))
def test_docs_every_relative_link_resolves(path):
    dead = dead_links(path)
    assert not dead, "dead links:\n" + "\n".join(dead)


def test_docs_link_check_refuses_a_missing_file_and_a_missing_anchor(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other page\n\n## Run it, `twice`\n")
    page.write_text("# Page\n\n[ok](other.md) [ok](other.md#run-it-twice) [ok](#page) [web](https://example.com/x)\n"
                    "`[code](gone.md)`\n\n```\n[block](gone.md)\n```\n")
    assert dead_links(page) == []
    page.write_text("# Page\n\n[gone](gone.md) [bad](other.md#run-it-thrice) [self](#nowhere)\n")
    assert [entry.split(": ", 1)[1] for entry in dead_links(page)] == [
        "gone.md (no such file)", "other.md#run-it-thrice (no such anchor in other.md)", "#nowhere (no such anchor in page.md)"]
    # A link whose words wrap onto the next line is checked too, and named by the line of its target.
    page.write_text("# Page\n\nsee [the other\npage](other.md#run-it-twice) and [the\nother](other.md#run-it-thrice)\n")
    assert dead_links(page) == [f"{page.name}:5: other.md#run-it-thrice (no such anchor in other.md)"]


def test_readme_is_short_and_links_to_every_docs_page():
    readme = ROOT / "README.md"
    text = readme.read_text()
    assert len(text.splitlines()) <= 300, f"README.md has {len(text.splitlines())} lines (at most 300)"
    assert len(text.encode()) <= 16_000, f"README.md has {len(text.encode())} bytes (at most 16,000)"
    linked = {(readme.parent / target.partition("#")[0]).resolve() for target in LINK.findall(prose(text))}
    pages = sorted(DOCS.glob("*.md"))
    assert len(pages) >= 10, f"docs/ has {len(pages)} pages"
    unlinked = [str(page.relative_to(ROOT)) for page in pages if page.resolve() not in linked]
    assert not unlinked, f"README.md does not link to {unlinked}"
    # Every kit's page too (issue 48: the README names the four kits).
    assert [page.parent.name for page in KIT_PAGES] == ["go", "java", "node", "python"]
    assert [str(page.relative_to(ROOT)) for page in KIT_PAGES if page.resolve() not in linked] == []


def test_docs_pages_open_with_a_title_and_what_the_reader_gets():
    for page in sorted(DOCS.glob("*.md")):
        lines = page.read_text().splitlines()
        assert lines[0].startswith("# "), f"{page.name} opens without a title"
        first = next((line for line in lines[1:] if line.strip()), "")
        assert first and not first.startswith(("#", "```", "<!--", "|")), f"{page.name}: the title is not followed by a paragraph"


def test_benchmarks_is_short_and_opens_with_its_table():
    lines = (ROOT / "BENCHMARKS.md").read_text().splitlines()
    assert len(lines) <= 200, f"BENCHMARKS.md has {len(lines)} lines (at most 200)"
    first_section = lines.index(next(line for line in lines if line.startswith("## ")))
    table = next(index for index, line in enumerate(lines) if line.startswith("| figure | target | measured | ratio |"))
    assert table < next(index for index, line in enumerate(lines) if line.startswith("## ") and index > first_section)
    assert not re.search(r"/work/|/home/|/root/", "\n".join(lines)), "BENCHMARKS.md names a machine's absolute path"


# ---- docs/cli.md against every command's --help ----

def help_text(command):
    result = subprocess.run([BINARY, *command, "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, f"{command} --help exited {result.returncode}: {result.stderr}"
    return result.stdout


def help_options(text):
    """The options a `--help` text defines: those of its usage lines (up to the first blank line)
    and of lines that start with an option; prose that mentions other tools' flags is not one."""
    usage = text.split("\n\n", 1)[0]
    defined = "\n".join(re.split(r"\s{2,}", line.strip())[0] for line in text.splitlines() if re.match(r"^\s+--[a-z]", line))
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", usage + "\n" + defined))


def commands():
    """Every command the top-level help names (`[serve]` included), by its first word."""
    usage = help_text([])
    return sorted(set(re.findall(r"^\s*(?:usage: )?appleid-mock \[?([a-z][a-z-]+)", usage, re.M)))


def cli_sections():
    """docs/cli.md's `## `appleid-mock COMMAND …`` sections by their command's first word: the
    words of the heading, the options in the first cell of its table rows, the variables in it."""
    text = (DOCS / "cli.md").read_text()
    sections = {}
    for match in re.finditer(r"^## `appleid-mock ([^`]+)`\n(.*?)(?=^## |\Z)", text, re.M | re.S):
        words, body = match.group(1).split(), match.group(2)
        options = set()
        for row in body.splitlines():
            if row.startswith("| `"):
                options.update(re.findall(r"(?<![\w-])--[a-z][a-z-]+", row.split("|")[1]))
        assert words[0] not in sections, f"docs/cli.md has two sections for {words[0]}"
        sections[words[0]] = (words, options, set(re.findall(r"APPLEID_MOCK_[A-Z_]+", body)), body)
    return sections


def test_docs_cli_has_a_section_for_every_command_and_no_other():
    sections, expected = set(cli_sections()), set(commands())
    assert "serve" in expected and "faults" in expected and "version" in expected, expected
    assert sections == expected, f"docs/cli.md sections for no command: {sorted(sections - expected)}; " \
                                 f"commands without a section: {sorted(expected - sections)}"


@pytest.mark.parametrize("command", commands())
def test_docs_cli_section_names_exactly_the_options_variables_and_verbs_of_its_help(command):
    words, options, variables, body = cli_sections()[command]
    text = help_text(words)
    wanted = help_options(text)
    assert options == wanted, f"docs/cli.md `appleid-mock {' '.join(words)}`: lacks {sorted(wanted - options)}, " \
                              f"names options its --help does not: {sorted(options - wanted)}"
    helped = set(re.findall(r"APPLEID_MOCK_[A-Z_]+", text))
    assert variables == helped, f"docs/cli.md `appleid-mock {' '.join(words)}`: lacks variables {sorted(helped - variables)}, " \
                                f"names variables its --help does not: {sorted(variables - helped)}"
    verbs = set(re.findall(rf"^\s*(?:usage: )?appleid-mock {command} \[?([a-z][a-z-]*)", text, re.M))
    missing = sorted(verb for verb in verbs if f"{command} {verb}" not in body)
    assert not missing, f"docs/cli.md `appleid-mock {command}` does not describe: {missing}"


def test_docs_cli_check_refuses_a_missing_and_an_extra_option():
    text = "usage: appleid-mock thing [--one N] [--two]\n\n  --one N    one\n  --two      two\n"
    assert help_options(text) == {"--one", "--two"}
    assert help_options(text) != {"--one"} and help_options(text) != {"--one", "--two", "--three"}


def test_the_cli_reads_no_environment_variable_its_help_leaves_out():
    read = set()
    for source in (ROOT / "Sources" / "appleid-mock").glob("*.swift"):
        read.update(re.findall(r"\"(APPLEID_MOCK_[A-Z_]+)\"", source.read_text()))
    helped = set()
    for words, _, _, _ in cli_sections().values():
        helped.update(re.findall(r"APPLEID_MOCK_[A-Z_]+", help_text(words)))
    assert read <= helped, f"variables read by the CLI but in no --help: {sorted(read - helped)}"


# ---- docs/control-api.md against Contract/openapi.json ----

METHODS = ("get", "post", "put", "patch", "delete")


def openapi_routes():
    document = json.loads((ROOT / "Sources" / "AppleIDMock" / "Contract" / "openapi.json").read_text())
    return {(method.upper(), path) for path, item in document["paths"].items() for method in item if method in METHODS}


def documented_routes(text):
    routes = set()
    for line in text.splitlines():
        if line.startswith("| `"):
            routes.update(re.findall(r"`(GET|POST|PUT|PATCH|DELETE) (/[^`?\s]*)", line.split("|")[1]))
    return routes


def test_docs_control_api_lists_exactly_the_routes_of_the_openapi_contract():
    documented = documented_routes((DOCS / "control-api.md").read_text())
    contract = openapi_routes()
    assert documented == contract, f"docs/control-api.md lacks {sorted(contract - documented)}; " \
                                   f"names routes the contract lacks: {sorted(documented - contract)}"


def test_docs_control_api_check_reads_the_first_cell_only():
    text = "| `GET /a`, `DELETE /a` | see `POST /b` |\n| route | `GET /c` |\n"
    assert documented_routes(text) == {("GET", "/a"), ("DELETE", "/a")}


# ---- docs/scenario.md against the scenario reader ----

def scenario_keys():
    """Every key the scenario reader knows: its `known:` lists, the knobs, a fault's keys and the
    relay refusal reasons."""
    sources = ROOT / "Sources" / "AppleIDMock"
    keys = set()
    loading = (sources / "Scenario" / "Scenario+Loading.swift").read_text()
    for group in re.findall(r"known: \[([^\]]*)\]", loading):
        keys.update(re.findall(r"\"([a-z_]+)\"", group))
    knobs = (sources / "Scenario" / "Compatibility+Knobs.swift").read_text()
    keys.update(re.findall(r"\.(?:choice|bool|string|int)\(\"([a-z_]+)\"", knobs))
    keys.update(re.findall(r"Knob\(name: \"([a-z_]+)\"", knobs))
    fault = (sources / "Faults" / "FaultSpec.swift").read_text()
    keys.update(re.findall(r"\"([a-z_]+)\"", re.search(r"static let keys = \[([^\]]*)\]", fault).group(1)))
    incident = (sources / "Faults" / "FaultIncident.swift").read_text()
    keys.update(re.findall(r"\"([a-z_]+)\"", re.search(r"static let keys = \[([^\]]*)\]", incident).group(1)))
    refusals = (sources / "Domain" / "RelayVerdict.swift").read_text()
    keys.update(re.findall(r"case \w+ = \"([a-z_]+)\"", refusals))
    return keys


def test_docs_scenario_names_every_key_a_scenario_may_hold():
    keys = scenario_keys()
    assert {"teams", "team_id", "relay_refusal", "action", "spf_fail", "max_message_bytes"} <= keys, keys
    text = (DOCS / "scenario.md").read_text()
    # A key is named in a code span alone (`teams`) or as the last step of a path (`rotation.every`,
    # `developer_keys[].key_id`).
    missing = sorted(key for key in keys if not re.search(rf"`(?:[\w\[\]]+\.)*{key}`", text))
    assert not missing, f"docs/scenario.md does not name {missing}"


# ---- docs/parity.md: generated from docs/parity.json, every row pinned ----

def parity(*args):
    return subprocess.run([str(ROOT / "scripts" / "parity"), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.fixture
def parity_copy(tmp_path):
    """The committed data and table, copied, to edit into rejected twins."""
    data, out = tmp_path / "parity.json", tmp_path / "parity.md"
    data.write_text((DOCS / "parity.json").read_text())
    out.write_text((DOCS / "parity.md").read_text())
    return data, out


def edit_rows(data, change):
    rows = json.loads(data.read_text())
    change(rows)
    data.write_text(json.dumps(rows, indent=2))


def test_parity_table_is_what_its_data_makes_and_every_row_is_whole(parity_copy):
    result = parity("--check")
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    data, out = parity_copy
    assert (parity("--check", "--data", data, "--out", out).returncode) == 0
    out.write_text(out.read_text().replace("| documented |", "| observed |", 1))
    result = parity("--check", "--data", data, "--out", out)
    assert result.returncode == 1 and "is not what" in result.stderr and "run scripts/parity" in result.stderr
    assert parity("--data", data, "--out", out).returncode == 0
    assert out.read_text() == (DOCS / "parity.md").read_text()


def first_documented(rows):
    return next(row for row in rows if row["tag"] == "D")


def test_parity_a_documented_row_naming_no_test_fails(parity_copy):
    data, out = parity_copy
    rows = json.loads(data.read_text())
    row = first_documented(rows)
    edit_rows(data, lambda rows: first_documented(rows).update(tests=[]))
    result = parity("--check", "--data", data, "--out", out)
    assert result.returncode == 1
    assert f"({row['id']}): a [D] behaviour names no test that pins the mock's answer" in result.stderr


def test_parity_a_row_naming_a_test_that_does_not_exist_fails(parity_copy):
    data, out = parity_copy
    rows = json.loads(data.read_text())
    real = first_documented(rows)["tests"][0]
    path, _, name = real.partition("::")
    for missing in (f"{path}::{name}_Gone", f"{path}.gone::{name}", name):
        edit_rows(data, lambda rows: first_documented(rows).update(tests=[real, missing]))
        result = parity("--check", "--data", data, "--out", out)
        assert result.returncode == 1 and f"names the test {missing!r}, which does not exist" in result.stderr, missing


def test_parity_a_probe_that_names_no_row_fails(parity_copy):
    data, out = parity_copy
    edit_rows(data, lambda rows: [row.pop("probe") for row in rows if row.get("probe") == "token-unknown-key"])
    result = parity("--check", "--data", data, "--out", out)
    assert result.returncode == 1
    assert "the conformance probe 'token-unknown-key' names no row" in result.stderr
    edit_rows(data, lambda rows: first_documented(rows).update(probe="token-unknown-nothing"))
    result = parity("--check", "--data", data, "--out", out)
    assert "names the probe 'token-unknown-nothing', which `appleid-mock conformance` lacks" in result.stderr


def test_parity_a_row_in_no_section_or_with_no_tag_fails(parity_copy):
    data, out = parity_copy
    edit_rows(data, lambda rows: first_documented(rows).update(section="14", tag="X"))
    result = parity("--check", "--data", data, "--out", out)
    assert result.returncode == 1
    assert "section '14' is no section of docs/apple-behaviour.md" in result.stderr
    assert "tag 'X' is none of D, O, U, I" in result.stderr


def test_readme_answers_how_faithful_with_the_parity_table():
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"\]\(docs/parity\.md\)", readme), "README.md does not link docs/parity.md"


# ---- the version the docs name is the checkout's ----

RELEASE_NAMES = [
    re.compile(r"ghcr\.io/appleid-mock/appleid-mock:(\d+\.\d+\.\d+)\b"),
    re.compile(r"appleid-mock-(\d+\.\d+\.\d+)-linux-"),
    re.compile(r"appleid-mock/appleid-mock@v(\d+\.\d+\.\d+)\b"),
    re.compile(r"\bappleid-mock (\d+\.\d+\.\d+)\b"),
]
VERSIONED = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md")), ROOT / "integrations" / "python" / "README.md",
             ROOT / "integrations" / "node" / "README.md", ROOT / "integrations" / "go" / "README.md",
             ROOT / "integrations" / "java" / "README.md"]


def named_versions(text):
    return {match.group(1) for pattern in RELEASE_NAMES for match in pattern.finditer(text)}


def test_docs_name_the_checkouts_version_and_so_do_the_binary_and_the_kits():
    # newcomer P2: the docs named 0.2.0 while the checkout printed 0.1.0.
    printed = subprocess.run([BINARY, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    version = printed.removeprefix("appleid-mock ")
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), printed
    kit = ROOT / "integrations" / "python"
    assert re.search(r'^version = "(.+)"$', (kit / "pyproject.toml").read_text(), re.M).group(1) == version
    assert re.search(r'^__version__ = "(.+)"$', (kit / "src" / "appleid_mock" / "__init__.py").read_text(), re.M).group(1) == version
    assert json.loads((ROOT / "integrations" / "node" / "package.json").read_text())["version"] == version
    assert re.search(r"^    <version>(.+)</version>$", (ROOT / "integrations" / "java" / "pom.xml").read_text(), re.M).group(1) == version
    named = {str(path.relative_to(ROOT)): named_versions(path.read_text()) for path in VERSIONED}
    assert {path: found for path, found in named.items() if found - {version}} == {}
    assert named["README.md"] == {version} and named["docs/backend-ci.md"] == {version}


def test_docs_version_check_finds_another_version_in_each_kind_of_name():
    # The twins: each kind of name with a version that is not the checkout's.
    for text in ("ghcr.io/appleid-mock/appleid-mock:0.1.9", "appleid-mock-0.1.9-linux-x86_64.tar.gz",
                 "uses: appleid-mock/appleid-mock@v0.1.9", "# appleid-mock 0.1.9"):
        assert named_versions(text) == {"0.1.9"}, text
    assert named_versions("ghcr.io/appleid-mock/appleid-mock:${VERSION}") == set()
