// Your bench's upload: a chosen or dropped .tar.gz is sent as it is; a chosen or dropped
// folder is packed here into a ustar archive (pax records for long names), gzipped with
// CompressionStream, and sent. The service checks everything again.
"use strict";

(function () {
  const form = document.getElementById("upload-form");
  if (!form) return;
  const zone = document.getElementById("drop-zone");
  const status = document.getElementById("upload-status");
  const refusal = document.getElementById("upload-refusal");
  const problems = document.getElementById("upload-problems");
  const encoder = new TextEncoder();
  const BLOCK = 512;

  function say(text) {
    status.textContent = text;
  }

  function octal(value, width) {
    return value.toString(8).padStart(width - 1, "0") + "\0";
  }

  function put(block, offset, text, width) {
    const bytes = encoder.encode(text);
    block.set(bytes.subarray(0, width), offset);
  }

  function header(name, size, type) {
    const block = new Uint8Array(BLOCK);
    put(block, 0, name, 100);
    put(block, 100, "0000644\0", 8);
    put(block, 108, "0000000\0", 8);
    put(block, 116, "0000000\0", 8);
    put(block, 124, octal(size, 12), 12);
    put(block, 136, octal(Math.floor(Date.now() / 1000), 12), 12);
    put(block, 148, "        ", 8);
    put(block, 156, type, 1);
    put(block, 257, "ustar\0", 6);
    put(block, 263, "00", 2);
    let sum = 0;
    for (const byte of block) sum += byte;
    put(block, 148, sum.toString(8).padStart(6, "0") + "\0 ", 8);
    return block;
  }

  function paxRecord(key, value) {
    const body = " " + key + "=" + value + "\n";
    const bodyLength = encoder.encode(body).length;
    let length = bodyLength + 1;
    while (String(length).length + bodyLength !== length) length = String(length).length + bodyLength;
    return encoder.encode(length + body);
  }

  function padding(size) {
    return new Uint8Array((BLOCK - (size % BLOCK)) % BLOCK);
  }

  // files: [{path, file}] with paths like "job-name/trial/result.json".
  async function pack(files) {
    const parts = [];
    files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (const { path, file } of files) {
      const name = encoder.encode(path);
      let shortName = path;
      if (name.length > 100 || /[^\x20-\x7e]/.test(path)) {
        const record = paxRecord("path", path);
        parts.push(header("PaxHeader", record.length, "x"), record, padding(record.length));
        shortName = "long-name";
      }
      parts.push(header(shortName, file.size, "0"), file, padding(file.size));
    }
    parts.push(new Uint8Array(BLOCK * 2));
    const stream = new Blob(parts).stream().pipeThrough(new CompressionStream("gzip"));
    return new Response(stream).blob();
  }

  function showProblems(list) {
    problems.replaceChildren();
    for (const problem of list) {
      const item = document.createElement("li");
      item.append(problem.message + " ");
      const code = document.createElement("code");
      code.className = "code";
      code.textContent = problem.code;
      // Each code links its entry on the Troubleshooting page.
      const link = document.createElement("a");
      link.href = "/guide/troubleshooting#" + encodeURIComponent(problem.code);
      link.append(code);
      item.append(link);
      problems.append(item);
    }
    refusal.hidden = false;
  }

  async function send(archive, label) {
    refusal.hidden = true;
    say("Uploading " + label + "…");
    const headers = {
      "content-type": "application/gzip",
      "x-hbench-csrf": form.dataset.csrf,
    };
    const token = document.getElementById("run-token").value.trim();
    if (token) headers["hpg-run-token"] = token;
    let answer;
    try {
      answer = await fetch(form.dataset.action, {
        method: "POST",
        headers: headers,
        body: archive,
        credentials: "same-origin",
      });
    } catch (error) {
      say("");
      showProblems([{ message: "the upload did not reach the service: " + error, code: "upload-unreachable" }]);
      return;
    }
    let body = {};
    try {
      body = await answer.json();
    } catch (error) {
      body = {};
    }
    if (answer.status === 201 && body.location) {
      say("Uploaded: opening the job…");
      window.location.assign(body.location);
      return;
    }
    say("");
    const errors = body.errors && body.errors.length ? body.errors
      : [{ message: "the service answered " + answer.status, code: body.code || "upload-refused" }];
    showProblems(errors);
  }

  async function sendFolder(files) {
    if (!files.length) return;
    const top = files[0].path.split("/")[0];
    say("Packing " + top + " (" + files.length + " files)…");
    const archive = await pack(files);
    await send(archive, top + ".tar.gz");
  }

  function isArchive(file) {
    return /\.(tar\.gz|tgz)$/i.test(file.name) || file.type === "application/gzip";
  }

  document.getElementById("archive-input").addEventListener("change", (event) => {
    const file = event.target.files[0];
    if (file) send(file, file.name);
  });

  document.getElementById("folder-input").addEventListener("change", (event) => {
    const files = Array.from(event.target.files, (file) => ({ path: file.webkitRelativePath || file.name, file: file }));
    sendFolder(files);
  });

  function readEntries(reader) {
    return new Promise((resolve, reject) => reader.readEntries(resolve, reject));
  }

  function fileOf(entry) {
    return new Promise((resolve, reject) => entry.file(resolve, reject));
  }

  async function walk(entry, prefix, out) {
    const path = prefix ? prefix + "/" + entry.name : entry.name;
    if (entry.isFile) {
      out.push({ path: path, file: await fileOf(entry) });
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await readEntries(reader);
        if (!batch.length) break;
        for (const child of batch) await walk(child, path, out);
      }
    }
  }

  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", async (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    const items = Array.from(event.dataTransfer.items || []);
    const entries = items.map((item) => (item.webkitGetAsEntry ? item.webkitGetAsEntry() : null)).filter(Boolean);
    if (entries.length === 1 && entries[0].isDirectory) {
      const files = [];
      await walk(entries[0], "", files);
      await sendFolder(files);
      return;
    }
    const file = event.dataTransfer.files[0];
    if (file && isArchive(file)) {
      await send(file, file.name);
    } else {
      showProblems([{ message: "drop one job folder or one .tar.gz of it", code: "archive-several-jobs" }]);
    }
  });
})();
