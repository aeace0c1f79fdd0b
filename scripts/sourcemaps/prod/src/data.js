// Orders of a made-up shop: generated from a seed, so every recording does the same work.
import * as d3 from 'd3';
import * as _ from 'lodash-es';
import { addMinutes, startOfDay, subDays } from 'date-fns';

const REGIONS = ['north', 'south', 'east', 'west', 'central'];
const PRODUCTS = _.range(240).map((i) => `sku-${i.toString(36).padStart(3, '0')}`);

export function makeOrders(seed, count) {
  const random = d3.randomLcg(seed);
  const amount = d3.randomLogNormal.source(random)(3, 0.8);
  const customers = _.range(1200).map((i) => makeCustomer(i, random));
  const start = subDays(startOfDay(new Date(Date.UTC(2026, 10, 30))), 90);
  const orders = new Array(count);
  for (let i = 0; i < count; i++) {
    const customer = customers[Math.floor(random() * customers.length)];
    orders[i] = {
      id: i,
      customer: customer.id,
      region: customer.region,
      product: PRODUCTS[Math.floor(random() * PRODUCTS.length)],
      quantity: 1 + Math.floor(random() * 6),
      amount: Math.round(amount() * 100) / 100,
      at: addMinutes(start, Math.floor(random() * 90 * 24 * 60)),
    };
  }
  return { orders, customers };
}

function makeCustomer(i, random) {
  return {
    id: `c${i}`,
    name: `Customer ${i}`,
    region: REGIONS[Math.floor(random() * REGIONS.length)],
    since: Math.floor(random() * 3650),
  };
}

export function orderLines(orders, count) {
  return _.sortBy(orders, [(o) => -o.amount, 'id']).slice(0, count);
}
