// Render Cucumber Messages (NDJSON on stdin) to HTML (stdout) with the official
// @cucumber/html-formatter, as Cucumber's own tools do.
import { CucumberHtmlStream } from '@cucumber/html-formatter'
import { createInterface } from 'node:readline'

const html = new CucumberHtmlStream()
html.pipe(process.stdout)
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim()) html.write(JSON.parse(line))
}
html.end()
