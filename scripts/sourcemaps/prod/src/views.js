// The React views: the dashboard (tables of days and customers) and the customer list,
// routed by react-router.
import { createContext, createElement as h, useContext } from 'react';
import { createMemoryRouter, Link, Outlet } from 'react-router-dom';
import { formatDistanceStrict, formatRelative } from 'date-fns';
import * as d3 from 'd3';

export const Store = createContext(null);
const money = d3.format(',.2f');

function Layout() {
  return h('div', { className: 'layout' },
    h('nav', null, h(Link, { to: '/' }, 'Dashboard'), ' ', h(Link, { to: '/customers' }, 'Customers')),
    h(Outlet));
}

function Dashboard() {
  const { summary } = useContext(Store);
  return h('section', null,
    h('h2', null, `Quantiles: ${summary.quantiles.map(money).join(' / ')}`),
    h(DayTable, { days: summary.byDay }),
    h(CustomerTable, { rows: summary.customers.slice(0, 400) }));
}

function DayTable({ days }) {
  return h('table', { className: 'days' }, h('tbody', null,
    days.map((d) => h('tr', { key: d.day }, h('td', null, d.label), h('td', null, `W${d.week}`), h('td', null, money(d.total))))));
}

function CustomerTable({ rows }) {
  return h('table', { className: 'customers' }, h('tbody', null, rows.map((r) => h(CustomerRow, { key: r.customer, row: r }))));
}

function CustomerRow({ row }) {
  return h('tr', null, h('td', null, row.customer), h('td', null, row.orders), h('td', null, money(row.total)),
    h('td', null, row.products), h('td', null, row.score.toFixed(3)));
}

function CustomerList() {
  const { customers, now } = useContext(Store);
  return h('ul', { className: 'list' }, customers.map((c) => h('li', { key: c.id },
    `${c.name} (${c.region}), customer for ${formatDistanceStrict(now - c.since * 864e5, now)}, last seen ${formatRelative(now - c.since * 3.6e6, now)}`)));
}

export function makeRouter() {
  return createMemoryRouter([
    { path: '/', element: h(Layout), children: [
      { index: true, element: h(Dashboard) },
      { path: 'customers', element: h(CustomerList) },
    ] },
  ]);
}
