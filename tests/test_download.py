"""Downloads: sha256 pins, mirror, archives, truncated transfers, nothing half-written."""
import hashlib
import http.server
import io
import tarfile
import threading
from pathlib import Path

import pytest

from sentaug.data.download import DownloadError, fetch, load_sources


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
        "url": url, "archive": "tar", "members": {"sts/": "STS/"}, "outputs": ["sts"],
        "files": {"sts/X/STS.input.t.txt": pin_a, "sts/X/STS.gs.t.txt": [sha(b"other"), sha(B)]}}}}


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
    assert not list((out / ".cache").iterdir())  # the bad archive is not kept for the next attempt


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
    sources = {"official": {"corpus": {"url": url, "outputs": ["wiki/corpus.txt"],
                                       "files": {"wiki/corpus.txt": sha(_TruncatingHandler.body)}}}}
    out = tmp_path / "data"
    with pytest.raises(DownloadError, match="truncated|connection lost"):
        fetch("corpus", out, sources=sources)
    server.server_close()
    assert not (out / "wiki").exists()
    assert not list((out / ".cache").glob("corpus.txt*"))  # no partial download kept either


def test_mirror_is_used_instead_of_the_network_and_must_hold_every_file(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "sts/X").mkdir(parents=True)
    (mirror / "sts/X/STS.input.t.txt").write_bytes(A)
    (mirror / "sts/X/STS.gs.t.txt").write_bytes(B)
    sources = archive_sources("http://127.0.0.1:9/unreachable.tar", sha(A))
    fetch("bench", tmp_path / "data", mirror=str(mirror), sources=sources)
    assert (tmp_path / "data/sts/X/STS.gs.t.txt").read_bytes() == B
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
        "big": {"url": "http://127.0.0.1:9/big.txt", "outputs": ["wiki/big.txt"],
                "files": {"wiki/big.txt": {"lines": 10, "prefix_bytes": len(head), "prefix_sha256": sha(head)}}},
        "big_head": {"derive": {"from": "big", "file": "wiki/big.txt", "head_lines": 4},
                     "outputs": ["wiki/big_head.txt"], "files": {"wiki/big_head.txt": sha(head)}}}}
    fetch("big_head", tmp_path / "data", mirror=str(mirror), sources=sources)
    assert (tmp_path / "data/wiki/big_head.txt").read_bytes() == head
    (mirror / "wiki/big.txt").write_bytes(b"".join(lines[:9]))  # one line short
    with pytest.raises(DownloadError, match="9 lines, expected 10"):
        fetch("big", tmp_path / "data2", mirror=str(mirror), sources=sources)


def test_demo_origin_copies_the_bundled_data_with_its_manifest(tmp_path):
    written = fetch("senteval", tmp_path, origin="demo")
    assert {p.name for p in written} == {"sts", "sick"}
    assert (tmp_path / "sts/STSBenchmark/sts-dev.csv").is_file()
    assert (tmp_path / "sick/SICK_test_annotated.txt").is_file()


def test_unknown_source_lists_the_known_ones(tmp_path):
    with pytest.raises(DownloadError, match="known: .*senteval"):
        fetch("nope", tmp_path)


@pytest.mark.mirror
def test_official_pins_match_the_real_mirror(tmp_path, mirror):
    """The sha256 pins in sources.yaml accept the verified real copies (STS12-16, STS-B, SICK, wiki head)."""
    fetch("senteval", tmp_path, mirror=str(mirror))
    fetch("wiki1m_head", tmp_path, mirror=str(mirror))
    pinned = load_sources()["official"]["senteval"]["files"]
    assert sum(1 for _ in (tmp_path / "sts").rglob("*.*")) + 3 == len(pinned)
    assert sum(1 for _ in (tmp_path / "wiki/wiki1m_head.txt").open()) == 11914
    assert (tmp_path / "sts/STS13-en-test/STS.gs.FNWN.txt").read_bytes() == \
        (Path(mirror) / "sts/STS13-en-test/STS.gs.FNWN.txt").read_bytes()


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
    src = {"url": archive.as_uri(), "archive": "zip", "member": "corpus.json", "outputs": ["wiki/simclue.txt"],
           "files": {"wiki/simclue.txt": {"lines": 6, "prefix_bytes": len(head), "prefix_sha256": sha(head)}}}
    fetch("simclue", tmp_path / "out", sources={"official": {"simclue": src}})
    assert (tmp_path / "out/wiki/simclue.txt").read_bytes() == b"".join(lines)
    with zipfile.ZipFile(tmp_path / "two.zip", "w") as z:
        z.writestr("a/corpus.json", b"".join(lines))
        z.writestr("b/corpus.json", b"".join(lines))
    src["url"] = (tmp_path / "two.zip").as_uri()
    with pytest.raises(DownloadError, match="2 members named corpus.json"):
        fetch("simclue", tmp_path / "out2", sources={"official": {"simclue": src}})
    assert not (tmp_path / "out2/wiki").exists()
