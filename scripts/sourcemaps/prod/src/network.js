// Which customers buy the same products: a force layout of customers, laid out synchronously.
import * as d3 from 'd3';
import * as _ from 'lodash-es';

export function layoutNetwork(orders, size, ticks) {
  const top = _.take(_.orderBy(_.toPairs(_.countBy(orders, 'customer')), [1], ['desc']), size);
  const keep = new Set(top.map(([c]) => c));
  const buyers = _.groupBy(orders.filter((o) => keep.has(o.customer)), 'product');
  const links = linkBuyers(buyers);
  const nodes = top.map(([id, n]) => ({ id, n }));
  const simulation = d3.forceSimulation(nodes)
    .force('link', d3.forceLink(links).id((d) => d.id).strength(0.05))
    .force('charge', d3.forceManyBody().strength(-20))
    .force('center', d3.forceCenter(300, 200))
    .force('collide', d3.forceCollide((d) => 2 + Math.sqrt(d.n)))
    .stop();
  simulation.tick(ticks);
  const hull = d3.polygonHull(nodes.map((d) => [d.x, d.y]));
  const delaunay = d3.Delaunay.from(nodes, (d) => d.x, (d) => d.y);
  return { nodes, links, hull, cells: delaunay.voronoi([0, 0, 600, 400]) };
}

function linkBuyers(buyers) {
  const links = [];
  for (const list of Object.values(buyers)) {
    const ids = _.uniq(list.map((o) => o.customer)).slice(0, 12);
    for (let i = 0; i < ids.length; i++) {
      for (let j = i + 1; j < ids.length; j++) links.push({ source: ids[i], target: ids[j] });
    }
  }
  return _.uniqBy(links, (l) => `${l.source}|${l.target}`);
}
