// The "export" panel: the data as code in several languages, highlighted by highlight.js.
import hljs from 'highlight.js';
import { format } from 'date-fns';
import * as _ from 'lodash-es';

export function exportSnippets(lines) {
  const rows = lines.map((o) => ({ ...o, at: format(o.at, "yyyy-MM-dd'T'HH:mm") }));
  return [
    ['json', JSON.stringify(rows, null, 2)],
    ['javascript', `export const orders = ${JSON.stringify(rows)};\n` + rows.map((r) => `total += ${r.amount} * ${r.quantity}; // ${r.product}`).join('\n')],
    ['sql', rows.map((r) => `INSERT INTO orders (id, customer, product, amount) VALUES (${r.id}, '${r.customer}', '${r.product}', ${r.amount});`).join('\n')],
    ['python', 'orders = [\n' + rows.map((r) => `    {"id": ${r.id}, "amount": ${r.amount}, "at": "${r.at}"},`).join('\n') + '\n]'],
    ['xml', '<orders>' + rows.map((r) => `<order id="${r.id}"><amount>${r.amount}</amount></order>`).join('') + '</orders>'],
  ];
}

export function highlightSnippets(snippets) {
  return snippets.map(([language, code]) => ({ language, html: hljs.highlight(code, { language }).value }));
}

export function guessLanguages(snippets) {
  // Auto-detection runs each candidate grammar over the start of the text.
  return _.map(snippets.slice(0, 2), ([, code]) => hljs.highlightAuto(code.slice(0, 300), ['json', 'javascript', 'sql', 'python', 'xml', 'yaml', 'css']).language);
}
