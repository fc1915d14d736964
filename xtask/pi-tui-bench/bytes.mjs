// Streams a markdown answer through the TypeScript pi-tui (`TuiMainScreen`, its default
// main-screen renderer) at 100×30, one synchronous render per delta, and prints the bytes it
// writes to the terminal: the side-by-side figure for pi-rs's `render/answer` bench.
// Usage: node bytes.mjs <pi-tui package dir> <answer.md> [history messages]
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [pkgDir, answerPath, historyArg] = process.argv.slice(2);
const tui = await import(pathToFileURL(path.join(pkgDir, "dist", "index.js")).href);
const { TuiMainScreen, Markdown, Text, Container } = tui;

let bytes = 0;
const term = {
  start() {}, stop() {}, async drainInput() {},
  write(d) { bytes += Buffer.byteLength(d, "utf8"); },
  get columns() { return 100; }, get rows() { return 30; },
  get kittyProtocolActive() { return false; },
  moveBy() {}, hideCursor() {}, showCursor() {}, clearLine() {}, clearFromCursor() {},
  clearScreen() {}, setTitle() {}, setProgress() {},
};
const id = (s) => s;
const theme = { heading: id, link: id, linkUrl: id, code: id, codeBlock: id, codeBlockBorder: id,
  quote: id, quoteBorder: id, hr: id, listBullet: id, bold: id, italic: id, strikethrough: id, underline: id };

const ui = new TuiMainScreen(term);
const chat = new Container();
ui.addChild(chat);
for (let i = 0; i < Number(historyArg ?? 10); i++) {
  chat.addChild(new Text(`message ${i}: an earlier exchange with a few words in it`, 0, 0));
}
const rule = "─".repeat(100);
ui.addChild(new Text(`${rule}\n> \n${rule}\n~/project (main) · model`, 0, 0));
ui.start();
ui.renderNow(true);
const answer = readFileSync(answerPath, "utf8");
const md = new Markdown("", 0, 0, theme);
chat.addChild(md);
const before = bytes;
let at = 0, k = 0, deltas = 0;
while (at < answer.length) {
  const end = Math.min(answer.length, at + 3 + (k * 7) % 10);
  md.setText(answer.slice(0, end));
  ui.renderNow();
  at = end; k++; deltas++;
}
ui.stop();
console.log(`pi-tui-bytes deltas=${deltas} bytes=${bytes - before} full_redraws=${ui.fullRedraws}`);
process.exit(0);
