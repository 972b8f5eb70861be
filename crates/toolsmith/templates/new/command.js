// {{name}}: repeats a text.
//
// Toolsmith runs this once per call with the arguments as one JSON object on stdin. What it
// prints is the result: plain text here; a JSON object would become structured content.
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const args = JSON.parse(input || "{}");
  console.log(Array(args.times ?? 1).fill(args.text).join(" "));
});
