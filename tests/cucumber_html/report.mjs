// Render a folder of Cucumber JSON files into a report folder with multiple-cucumber-html-reporter,
// as a CI job publishing the run's cucumber.json would: each feature's metadata shown as its
// custom metadata, and the JSON the reporter built its pages from kept beside them.
import report from 'multiple-cucumber-html-reporter'

const [jsonDir, reportPath] = process.argv.slice(2)
report.generate({
  jsonDir,
  reportPath,
  customMetadata: true,
  displayDuration: true,
  staticFilePath: true,
  saveCollectedJSON: true,
  disableLog: true,
})
