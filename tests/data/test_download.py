"""Downloads: sha256 pins, mirror, archives, truncated transfers, nothing half-written."""
import hashlib
import http.server
import io
import subprocess
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest

from sentaug.data.download import DownloadError, check_sources, fetch, git_blob_sha1, load_sources, source_names


@pytest.fixture(autouse=True)
def no_env_mirror(monkeypatch):
    """Each test passes its mirror explicitly; $SENTAUG_MIRROR (set in CI) must not leak in."""
    monkeypatch.delenv("SENTAUG_MIRROR", raising=False)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


A, B = b"a\tb\n", b"4.0\n"


def tar_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def archive_sources(url: str, pin_a: str) -> dict:
    return {"official": {"bench": {
        "downloads": {"bench.tar": {"url": url}}, "archive": "bench.tar", "members": {"sts/": "STS/"},
        "outputs": ["sts"], "files": {"sts/X/STS.input.t.txt": pin_a, "sts/X/STS.gs.t.txt": [sha(b"other"), sha(B)]}}}}


def test_archive_download_extracts_and_verifies(tmp_path):
    archive = tmp_path / "bench.tar"
    archive.write_bytes(tar_bytes({"STS/X/STS.input.t.txt": A, "STS/X/STS.gs.t.txt": B, "STS/X/extra": b"x"}))
    out = tmp_path / "data"
    fetch("bench", out, sources=archive_sources(archive.as_uri(), sha(A)))
    assert (out / "sts/X/STS.input.t.txt").read_bytes() == A
    assert (out / "sts/X/STS.gs.t.txt").read_bytes() == B  # second accepted pin
    assert not (out / "sts/X/extra").exists()  # only pinned files are kept


def test_checksum_mismatch_names_the_file_and_writes_nothing(tmp_path):
    archive = tmp_path / "bench.tar"
    archive.write_bytes(tar_bytes({"STS/X/STS.input.t.txt": A + b"tampered", "STS/X/STS.gs.t.txt": B}))
    out = tmp_path / "data"
    with pytest.raises(DownloadError, match=r"sts/X/STS\.input\.t\.txt .*: sha256 [0-9a-f]{64} does not match"):
        fetch("bench", out, sources=archive_sources(archive.as_uri(), sha(A)))
    assert not (out / "sts").exists()
    assert [p.name for p in out.iterdir()] == [".cache"]
    assert not (out / ".cache/bench.tar").exists()  # the bad archive is not kept for the next attempt


def test_missing_archive_member_is_an_error(tmp_path):
    archive = tmp_path / "bench.tar"
    archive.write_bytes(tar_bytes({"STS/X/STS.input.t.txt": A}))
    with pytest.raises(DownloadError, match="lacks 1 expected member"):
        fetch("bench", tmp_path / "data", sources=archive_sources(archive.as_uri(), sha(A)))


class _TruncatingHandler(http.server.BaseHTTPRequestHandler):
    body = b"0123456789" * 100

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body) * 2))  # promise twice what is sent
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def test_truncated_transfer_is_an_error_and_leaves_nothing(tmp_path):
    server = http.server.HTTPServer(("127.0.0.1", 0), _TruncatingHandler)
    threading.Thread(target=server.handle_request, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/corpus.txt"
    sources = {"official": {"corpus": {"base_url": url.rsplit("/", 1)[0] + "/", "members": {"wiki/": ""},
                                       "outputs": ["wiki/corpus.txt"],
                                       "files": {"wiki/corpus.txt": sha(_TruncatingHandler.body)}}}}
    out = tmp_path / "data"
    with pytest.raises(DownloadError, match="truncated|connection lost"):
        fetch("corpus", out, sources=sources)
    server.server_close()
    assert not (out / "wiki").exists()
    assert not (out / ".cache").exists() or not list((out / ".cache").rglob("corpus.txt*"))  # no partial download


def test_mirror_is_used_instead_of_the_network_and_must_hold_every_file(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "sts/X").mkdir(parents=True)
    (mirror / "sts/X/STS.input.t.txt").write_bytes(A)
    (mirror / "sts/X/STS.gs.t.txt").write_bytes(B)
    sources = archive_sources("http://127.0.0.1:9/unreachable.tar", sha(A))
    fetched = fetch("bench", tmp_path / "data", mirror=str(mirror), sources=sources)
    assert (tmp_path / "data/sts/X/STS.gs.t.txt").read_bytes() == B
    # the message says the mirror was used
    assert fetched.said("bench") == (f"bench: {tmp_path}/data/sts, 2 file(s) from the mirror {mirror}, checked "
                                     f"against their pins")
    (mirror / "sts/X/STS.gs.t.txt").unlink()
    with pytest.raises(DownloadError, match=r"STS\.gs\.t\.txt is not in the mirror"):
        fetch("bench", tmp_path / "again", mirror=str(mirror), sources=sources)


def test_prefix_pin_and_derived_head(tmp_path):
    lines = [f"sentence {i}\n".encode() for i in range(10)]
    full = b"".join(lines)
    head = b"".join(lines[:4])
    mirror = tmp_path / "mirror"
    (mirror / "wiki").mkdir(parents=True)
    (mirror / "wiki/big.txt").write_bytes(full)
    sources = {"official": {
        "big": {"base_url": "http://127.0.0.1:9/", "members": {"wiki/": ""}, "outputs": ["wiki/big.txt"],
                "files": {"wiki/big.txt": {"lines": 10, "prefix_bytes": len(head), "prefix_sha256": sha(head)}}},
        "big_head": {"derive": {"from": "big", "file": "wiki/big.txt", "head_lines": 4},
                     "outputs": ["wiki/big_head.txt"], "files": {"wiki/big_head.txt": sha(head)}}}}
    fetch("big_head", tmp_path / "data", mirror=str(mirror), sources=sources)
    assert (tmp_path / "data/wiki/big_head.txt").read_bytes() == head
    (mirror / "wiki/big.txt").write_bytes(b"".join(lines[:9]))  # one line short
    with pytest.raises(DownloadError, match="9 lines, expected 10"):
        fetch("big", tmp_path / "data2", mirror=str(mirror), sources=sources)


def test_demo_origin_copies_the_bundled_data_with_its_manifest(tmp_path):
    written = fetch("senteval", tmp_path, origin="demo", mirror=str(tmp_path))
    assert {p.name for p in written} == {"sts", "sick"}
    assert written.said("senteval").endswith("(the bundled demo data)") and written.mirror is None
    assert (tmp_path / "sts/STSBenchmark/sts-dev.csv").is_file()
    assert (tmp_path / "sick/SICK_test_annotated.txt").is_file()


def test_every_demo_source_installs_from_the_bundled_data(tmp_path):
    for name, src in load_sources()["demo"].items():
        written = fetch(name, tmp_path, origin="demo")
        assert [p.relative_to(tmp_path).as_posix() for p in written] == src["outputs"]
        assert all(p.exists() and (p.is_file() or any(p.iterdir())) for p in written), name
    assert (tmp_path / "glue/MNLI/dev_mismatched.tsv").is_file() and (tmp_path / "cnsd/cnsd-sts-test.txt").is_file()


def test_unknown_source_lists_the_known_ones(tmp_path):
    with pytest.raises(DownloadError, match=r"unknown official source 'nope'; valid: clustering, cnsd, glue/CoLA, "
                                            r".* more: src/sentaug/data/sources.yaml\)$"):
        fetch("nope", tmp_path)


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_archive_pin_covers_unpinned_members_and_a_bad_archive_is_dropped(tmp_path):
    """GLUE's MNLI: members without a pin of their own are checked through the zip's sha256."""
    good = zip_bytes({"MNLI/train.tsv": b"t\n", "MNLI/dev_matched.tsv": b"d\n"})
    archive = tmp_path / "MNLI.zip"
    archive.write_bytes(good)
    sources = {"official": {"glue/MNLI": {
        "downloads": {"MNLI.zip": {"url": archive.as_uri(), "sha256": sha(good)}}, "archive": "MNLI.zip",
        "members": {"glue/MNLI/": "MNLI/"}, "outputs": ["glue/MNLI"],
        "files": {"glue/MNLI/train.tsv": None, "glue/MNLI/dev_matched.tsv": None}}}}
    fetch("glue/MNLI", tmp_path / "ok", sources=sources)
    assert (tmp_path / "ok/glue/MNLI/dev_matched.tsv").read_bytes() == b"d\n"
    archive.write_bytes(zip_bytes({"MNLI/train.tsv": b"tampered\n", "MNLI/dev_matched.tsv": b"d\n"}))
    with pytest.raises(DownloadError,
                       match=r"glue/MNLI: MNLI\.zip \(from file:.*\): sha256 [0-9a-f]{64} does not match"):
        fetch("glue/MNLI", tmp_path / "bad", sources=sources)
    assert not (tmp_path / "bad/glue").exists() and not (tmp_path / "bad/.cache/MNLI.zip").exists()
    # a mirror is never trusted for a file without its own pin: the official archive is used
    mirror = tmp_path / "mirror"
    (mirror / "glue/MNLI").mkdir(parents=True)
    (mirror / "glue/MNLI/train.tsv").write_bytes(b"unverifiable\n")
    archive.write_bytes(good)
    fetch("glue/MNLI", tmp_path / "m", mirror=str(mirror), sources=sources)
    assert (tmp_path / "m/glue/MNLI/train.tsv").read_bytes() == b"t\n"


def test_git_blob_pin_is_gits_content_hash(tmp_path):
    """SimCSE's nli_for_simcse.csv is pinned by its git blob id; checked against `git hash-object`."""
    data = b"sent0,sent1,hard_neg\nA,B,C\n"
    (tmp_path / "remote").mkdir()
    (tmp_path / "remote/nli_for_simcse.csv").write_bytes(data)
    blob = subprocess.run(["git", "hash-object", str(tmp_path / "remote/nli_for_simcse.csv")],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert git_blob_sha1(tmp_path / "remote/nli_for_simcse.csv") == blob
    src = {"base_url": (tmp_path / "remote").as_uri() + "/", "members": {"nli/simcse/": ""},
           "outputs": ["nli/simcse"], "files": {"nli/simcse/nli_for_simcse.csv": {"git_blob_sha1": blob}}}
    fetch("nli/simcse", tmp_path / "out", sources={"official": {"nli/simcse": src}})
    assert (tmp_path / "out/nli/simcse/nli_for_simcse.csv").read_bytes() == data
    src["files"]["nli/simcse/nli_for_simcse.csv"]["git_blob_sha1"] = "0" * 40
    with pytest.raises(DownloadError, match=r"nli_for_simcse\.csv \(from file:.*\): git blob id [0-9a-f]{40} does"):
        fetch("nli/simcse", tmp_path / "bad", sources={"official": {"nli/simcse": src}})
    assert not (tmp_path / "bad/nli").exists()


def test_built_files_and_mirror_with_official_fallback(tmp_path):
    """Clustering: the official label<TAB>text file is downloaded, verified and converted into the pinned CSV;
    a mirror serves the files it holds and the others come from their official addresses."""
    raw = b"2\tfirst text \r\n1\tsecond, with comma\r\n2\tthird\twith a tab\r\n"
    csv_bytes = b'text,label\nfirst text,2\n"second, with comma",1\nthird\twith a tab,2\n'  # by hand
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "raw_a").write_bytes(raw)
    (remote / "b.csv").write_bytes(b"text,label\nx,1\n")
    sources = {"official": {"clustering": {
        "downloads": {"raw/a": {"url": (remote / "raw_a").as_uri(), "sha256": sha(raw)}},
        "base_url": remote.as_uri() + "/", "members": {"clustering/": ""}, "outputs": ["clustering"],
        "files": {"clustering/a.csv": {"sha256": sha(csv_bytes), "build": "clustering_csv", "inputs": ["raw/a"]},
                  "clustering/b.csv": sha(b"text,label\nx,1\n")}}}}
    check_sources(sources)
    fetch("clustering", tmp_path / "out", sources=sources)
    assert (tmp_path / "out/clustering/a.csv").read_bytes() == csv_bytes
    mirror = tmp_path / "mirror"
    (mirror / "clustering").mkdir(parents=True)
    (mirror / "clustering/b.csv").write_bytes(b"text,label\nx,1\n")
    (remote / "b.csv").unlink()            # only the mirror has it now; a.csv still comes from the network
    fetch("clustering", tmp_path / "out2", mirror=str(mirror), sources=sources)
    assert (tmp_path / "out2/clustering/a.csv").read_bytes() == csv_bytes
    (mirror / "clustering/b.csv").write_bytes(b"text,label\nchanged,1\n")
    with pytest.raises(DownloadError, match=r"clustering/b\.csv \(from mirror .*\): sha256"):
        fetch("clustering", tmp_path / "out3", mirror=str(mirror), sources=sources)
    assert not (tmp_path / "out3/clustering").exists()


def test_every_official_file_has_an_address_and_a_pin():
    sources = load_sources()
    check_sources(sources)
    official = sources["official"]
    # the suites' sources are no longer mirror-only
    for name in ("transfer", "clustering", "intent", "glue/CoLA", "glue/MRPC", "nli/anli", "cnsd", "nli/simcse"):
        assert name in official and "mirror_only" not in official[name]
    assert source_names("glue") == [n for n in official if n.startswith("glue/")] and len(source_names("glue")) == 8
    assert source_names("transfer") == ["transfer"]
    with pytest.raises(DownloadError, match="unknown official source 'gloo'"):
        source_names("gloo")
    # every official folder has a demo counterpart laid out the same way
    demo = sources["demo"]
    for name, src in official.items():
        # corpora (demo: demo_corpus); WordNet, a resource laid out for nltk, not data
        if name not in ("wiki1m", "wiki1m_head", "wiki1m_head1k", "simclue", "simclue_head", "wordnet"):
            assert demo[name]["outputs"] == src["outputs"], name


OFFLINE_SOURCES = ["senteval", "wiki1m_head", "wiki1m_head1k", "transfer", "clustering", "intent", "cnsd", "nli/anli",
                   "nli/snli_senteval", "glue/CoLA", "glue/SST-2", "glue/MRPC", "glue/RTE", "glue/STS-B"]


@pytest.mark.mirror
def test_official_pins_match_the_real_mirror(tmp_path, mirror):
    """The pins in sources.yaml accept the verified real copies of every source whose files are all offline."""
    for name in OFFLINE_SOURCES:
        fetch(name, tmp_path, mirror=str(mirror))
    pinned = load_sources()["official"]["senteval"]["files"]
    assert sum(1 for _ in (tmp_path / "sts").rglob("*.*")) + 3 == len(pinned)
    assert sum(1 for _ in (tmp_path / "wiki/wiki1m_head.txt").open()) == 11914
    assert (tmp_path / "wiki/wiki1m_head.txt").read_text().startswith((tmp_path / "wiki/wiki1m_head1k.txt").read_text())
    assert sum(1 for _ in (tmp_path / "wiki/wiki1m_head1k.txt").open()) == 1000       # the test scale's corpus
    assert (tmp_path / "sts/STS13-en-test/STS.gs.FNWN.txt").read_bytes() == \
        (Path(mirror) / "sts/STS13-en-test/STS.gs.FNWN.txt").read_bytes()
    # GLUE's own SST-2 dev (dev.found.tsv in the mirror) is installed as dev.tsv
    assert (tmp_path / "glue/SST-2/dev.tsv").read_bytes() == (Path(mirror) / "glue/SST-2/dev.found.tsv").read_bytes()
    assert sorted(p.name for p in (tmp_path / "clustering").iterdir()) == sorted(
        ["agnews.csv", "biomedical.csv", "googlenews_S.csv", "googlenews_T.csv", "googlenews_TS.csv",
         "searchsnippets.csv", "stackoverflow.csv", "tweet89.csv"])


@pytest.mark.mirror
def test_clustering_conversion_reproduces_the_pinned_csvs_from_the_official_files(mirror):
    """The official label<TAB>text files (raw/, byte-exact copies) convert into exactly the pinned CSVs."""
    from sentaug.data.clustering import raw_to_csv

    src = load_sources()["official"]["clustering"]
    for rel, pin in src["files"].items():
        (raw_key,) = pin["inputs"]
        converted = raw_to_csv((Path(mirror) / "clustering" / raw_key).read_bytes())
        assert sha(converted) == pin["sha256"], rel


def test_zip_member_found_by_name_with_a_prefix_pin(tmp_path):
    """SimCLUE's corpus: one member of a zip, named corpus.json in an undocumented folder, pinned by its line
    count and the sha256 of its head; a zip with two such members is refused and leaves nothing."""
    import zipfile

    lines = [f"句子 {i}\n".encode() for i in range(6)]
    head = b"".join(lines[:2])
    archive = tmp_path / "simclue_public.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("simclue_public/corpus.json", b"".join(lines))
        z.writestr("simclue_public/train_pair.json", b"{}\n")
    src = {"downloads": {"simclue_public.zip": {"url": archive.as_uri()}}, "archive": "simclue_public.zip",
           "member_by_name": "corpus.json", "outputs": ["wiki/simclue.txt"],
           "files": {"wiki/simclue.txt": {"lines": 6, "prefix_bytes": len(head), "prefix_sha256": sha(head)}}}
    fetch("simclue", tmp_path / "out", sources={"official": {"simclue": src}})
    assert (tmp_path / "out/wiki/simclue.txt").read_bytes() == b"".join(lines)
    with zipfile.ZipFile(tmp_path / "two.zip", "w") as z:
        z.writestr("a/corpus.json", b"".join(lines))
        z.writestr("b/corpus.json", b"".join(lines))
    src["downloads"]["simclue_public.zip"]["url"] = (tmp_path / "two.zip").as_uri()
    with pytest.raises(DownloadError, match="2 members named corpus.json"):
        fetch("simclue", tmp_path / "out2", sources={"official": {"simclue": src}})
    assert not (tmp_path / "out2/wiki").exists()


def test_a_file_only_its_archive_pins_missing_from_the_mirror_is_named(tmp_path):
    """GLUE QNLI in ../shared/data: dev.tsv (pinned) is in the mirror, train.tsv (covered by the zip's sha256
    alone) is not, and offline the zip cannot be fetched: the error names train.tsv in one line."""
    dev = b"index\tquestion\tsentence\tlabel\n0\tq\ts\tentailment\n"
    sources = {"official": {"glue/QNLI": {
        "downloads": {"QNLIv2.zip": {"url": "http://127.0.0.1:9/QNLIv2.zip", "sha256": sha(b"zip")}},
        "archive": "QNLIv2.zip", "members": {"glue/QNLI/": "QNLI/"}, "outputs": ["glue/QNLI"],
        "files": {"glue/QNLI/train.tsv": None, "glue/QNLI/dev.tsv": sha(dev)}}}}
    mirror = tmp_path / "mirror"
    (mirror / "glue/QNLI").mkdir(parents=True)
    (mirror / "glue/QNLI/dev.tsv").write_bytes(dev)
    with pytest.raises(DownloadError) as e:
        fetch("glue/QNLI", tmp_path / "data", mirror=str(mirror), sources=sources)
    assert str(e.value).startswith(f"glue/QNLI: glue/QNLI/train.tsv is not in the mirror {mirror} (a file pinned "
                                   f"only by its archive's sha256 comes from the archive)")
    assert "\n" not in str(e.value) and not (tmp_path / "data/glue").exists()
