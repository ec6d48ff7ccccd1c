// Every test run uses the Node release the image ships: `.nvmrc` names it, the `node`
// devDependency installs it, and npm scripts put it first on the PATH. A run under another major
// (say, `jest` started by a system Node) would test a runtime nothing deploys, so it stops here.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

module.exports = async function requireProjectNode() {
  const wanted = readFileSync(join(__dirname, '.nvmrc'), 'utf8').trim();
  const major = (version) => version.replace(/^v/, '').split('.')[0];
  if (major(process.version) !== major(wanted)) {
    throw new Error(
      `tests run under Node ${process.version}, but the project runs on Node ${wanted} (.nvmrc): ` +
        'run them through npm (`npm test`, `npx nx test <project>`), which uses the Node in node_modules',
    );
  }
};
