// Aggregations of the orders: per day, per region and per customer.
import * as d3 from 'd3';
import * as _ from 'lodash-es';
import { format, formatISO, getISOWeek, startOfDay } from 'date-fns';

export function summarize(orders) {
  const byDay = dailyTotals(orders);
  const byRegion = d3.rollups(orders, (v) => d3.sum(v, (o) => o.amount * o.quantity), (o) => o.region)
    .sort((a, b) => d3.descending(a[1], b[1]));
  const quantiles = [0.5, 0.9, 0.99].map((p) => d3.quantile(orders, p, (o) => o.amount));
  return { byDay, byRegion, quantiles, customers: rankCustomers(orders) };
}

export function dailyTotals(orders) {
  const days = d3.rollup(orders, (v) => d3.fsum(v, (o) => o.amount * o.quantity),
    (o) => formatISO(startOfDay(o.at), { representation: 'date' }));
  return _.sortBy([...days], ([day]) => day).map(([day, total]) => ({
    day,
    total,
    week: getISOWeek(new Date(day)),
    label: format(new Date(day), 'EEE d MMM'),
  }));
}

export function rankCustomers(orders) {
  const groups = _.groupBy(orders, 'customer');
  const scored = _.map(groups, (list, customer) => ({
    customer,
    orders: list.length,
    total: _.sumBy(list, (o) => o.amount * o.quantity),
    products: _.uniq(_.map(list, 'product')).length,
    score: scoreCustomer(list),
  }));
  return _.orderBy(scored, ['score', 'total'], ['desc', 'desc']);
}

function scoreCustomer(list) {
  const amounts = list.map((o) => o.amount);
  const spread = d3.deviation(amounts) || 0;
  const recent = _.maxBy(list, (o) => o.at.getTime());
  return d3.mean(amounts) * Math.log1p(list.length) - spread / 10 + (recent ? recent.at.getTime() / 1e12 : 0);
}
