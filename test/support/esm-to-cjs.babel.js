/**
 * NestJS 12 ships ES modules only; Jest (before Node 24.9) can only `require` CommonJS. This
 * babel config turns those node_modules into CommonJS for the test runtime only; `nest build`
 * output runs them natively through Node's require(esm).
 *
 * Their `createRequire(import.meta.url)` calls become Jest's own `require`, so that optional
 * packages (class-validator, …) load into the same module registry as the code under test.
 */
function createRequireToJestRequire({ types: t }) {
  return {
    visitor: {
      CallExpression(path) {
        const callee = path.node.callee;
        const name = t.isIdentifier(callee)
          ? callee.name
          : t.isMemberExpression(callee) && t.isIdentifier(callee.property)
            ? callee.property.name
            : undefined;
        if (name !== 'createRequire') return;
        const declarator = path.parentPath;
        if (declarator.isVariableDeclarator() && t.isIdentifier(declarator.node.id, { name: 'require' })) {
          // `const require = createRequire(…)` would shadow the very require it should become.
          if (declarator.parentPath.node.declarations.length === 1) declarator.parentPath.remove();
          else declarator.remove();
        } else {
          path.replaceWith(t.identifier('require'));
        }
      },
      Import(path) {
        // import(x) → Promise.resolve().then(() => require(x)): Jest's CommonJS runtime cannot import().
        const call = path.parentPath;
        if (!call.isCallExpression()) return;
        const arrow = t.arrowFunctionExpression(
          [],
          t.callExpression(t.identifier('require'), call.node.arguments),
        );
        call.replaceWith(
          t.callExpression(
            t.memberExpression(
              t.callExpression(t.memberExpression(t.identifier('Promise'), t.identifier('resolve')), []),
              t.identifier('then'),
            ),
            [arrow],
          ),
        );
      },
      MetaProperty(path) {
        // import.meta.url / import.meta.resolve outside createRequire
        const parent = path.parentPath;
        if (parent.isMemberExpression() && t.isIdentifier(parent.node.property, { name: 'url' })) {
          parent.replaceWith(
            t.memberExpression(
              t.callExpression(
                t.memberExpression(
                  t.callExpression(t.identifier('require'), [t.stringLiteral('node:url')]),
                  t.identifier('pathToFileURL'),
                ),
                [t.identifier('__filename')],
              ),
              t.identifier('href'),
            ),
          );
        } else if (parent.isMemberExpression() && t.isIdentifier(parent.node.property, { name: 'resolve' })) {
          parent.replaceWith(t.memberExpression(t.identifier('require'), t.identifier('resolve')));
        } else if (parent.isMemberExpression() && t.isIdentifier(parent.node.property, { name: 'dirname' })) {
          // import.meta.dirname / .filename (Node 20.11+; @nestjs/terminus uses dirname)
          parent.replaceWith(t.identifier('__dirname'));
        } else if (
          parent.isMemberExpression() &&
          t.isIdentifier(parent.node.property, { name: 'filename' })
        ) {
          parent.replaceWith(t.identifier('__filename'));
        }
      },
    },
  };
}

module.exports = {
  babelrc: false,
  configFile: false,
  plugins: [
    createRequireToJestRequire,
    ['@babel/plugin-transform-modules-commonjs', { importInterop: 'node' }],
  ],
};
