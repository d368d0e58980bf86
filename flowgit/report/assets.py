"""The page's inline style sheet and script (no file, no network: the page is one file)."""

CSS = r"""
:root{--fg:#1f2328;--muted:#59636e;--line:#d0d7de;--bg:#fff;--panel:#f6f8fa;--proven:#1a7f37;--dev:#0969da;
--demoted:#cf222e;--archived:#8c959f;--warn:#bf8700;--bad:#cf222e}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
header{padding:16px 24px 8px;border-bottom:1px solid var(--line)}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
main{padding:0 24px 40px;max-width:1040px}
nav a{margin-right:14px}
.muted,.meta{color:var(--muted)}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{border:1px solid var(--line);border-radius:6px;padding:8px 12px;min-width:120px;background:var(--panel)}
.card b{display:block;font-size:20px}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;color:var(--muted);margin:6px 0}
.legend svg{vertical-align:middle}
.lane{border-top:1px solid var(--line);padding:6px 0 2px;break-inside:avoid}
.lane-head{display:flex;flex-wrap:wrap;gap:8px;align-items:baseline}
.lane-name{font-weight:600;font-family:ui-monospace,"DejaVu Sans Mono",monospace;overflow-wrap:anywhere;min-width:0}
.claim{margin:2px 0 0;overflow-wrap:anywhere}
.badge{font-size:11px;border-radius:10px;padding:1px 8px;border:1px solid var(--line);white-space:nowrap}
.badge.proven{color:#fff;background:var(--proven);border-color:var(--proven)}
.badge.developing{color:var(--dev);border-color:var(--dev)}
.badge.demoted{color:#fff;background:var(--demoted);border-color:var(--demoted)}
.badge.archived{color:var(--archived)}
.badge.weak,.badge.missing{color:#fff;background:var(--warn);border-color:var(--warn)}
.badge.missing{background:var(--bad);border-color:var(--bad)}
.badge.finding{color:#fff;background:var(--bad);border-color:var(--bad)}
svg{max-width:100%;height:auto;overflow:visible}
.grid{stroke:#eaeef2;stroke-width:1}
.lvl,.axis,.budget-label,.col-title{font-size:10px;fill:var(--muted)}
.col-title{font-weight:600;font-size:11px}
.life{fill:none;stroke:var(--dev);stroke-width:2}
.life.proven{stroke:var(--proven)}.life.demoted{stroke:var(--demoted)}.life.archived{stroke:var(--archived);stroke-dasharray:4 3}
.step path{fill:var(--dev);stroke:#fff;stroke-width:1}
.step.graduated path{fill:#d4a72c;stroke:#7d4e00}
.step.demoted path{fill:var(--demoted)}
.step.present path{fill:var(--muted)}
.step.archived path{fill:none;stroke:var(--archived);stroke-width:2.5}
.step.renamed path,.step.evidence path,.step.reworded path,.step.moved path{fill:#8250df}
.step .ring{fill:none;stroke:var(--bad);stroke-width:2;stroke-dasharray:3 2}
.step.override .ring{stroke-dasharray:none;stroke-width:3}
.step:focus,.ev:focus,.node:focus{outline:2px solid #0969da}
.ev{stroke-width:1.6;cursor:pointer}.ev.new{stroke-width:2.4}
.ev.missing{stroke:var(--bad);stroke-dasharray:2 1.5}
.series{fill:none;stroke:var(--dev);stroke-width:1.6}
.series-point{fill:var(--dev)}
.baseline{stroke:var(--line);stroke-width:1}
.budget{stroke-width:1}.budget.target{stroke:var(--warn);stroke-dasharray:5 4}.budget.hard{stroke:var(--bad)}
.budget-label.target{fill:var(--warn)}.budget-label.hard{fill:var(--bad)}
.over{fill:var(--bad)}
.archival{fill:var(--archived)}
.override-tick{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:2 2}
.edge{fill:none;stroke:#afb8c1;stroke-width:1;opacity:.8}
.edge.hot{stroke:#0969da;stroke-width:2;opacity:1}
.node text{font-size:11px;fill:var(--fg)}
.node.pattern circle{fill:var(--proven)}
.node.pattern.weak circle{fill:var(--warn)}.node.pattern.weak text{fill:#7d4e00;font-weight:600}
.node.pattern.missing circle{fill:var(--bad)}
.node.pattern.none-given circle{fill:#fff;stroke:var(--bad);stroke-width:2.5}
.node.episode.missing circle{stroke:var(--bad);stroke-dasharray:2 1.5}
.pager{margin:8px 0;display:flex;gap:8px;align-items:center}
button{font:inherit;padding:2px 10px;border:1px solid var(--line);border-radius:4px;background:var(--panel);cursor:pointer}
table{border-collapse:collapse;width:100%;font-size:12px;margin:6px 0 16px}
th,td{border:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}
th{background:var(--panel);position:sticky;top:0}
td code{font-size:11px;overflow-wrap:break-word}
tr.flagged td{background:#fff1f0}
tr.target td{outline:2px solid #0969da}
.findings li{margin:4px 0}.findings li.override{font-weight:600}
.finding-code{font-family:ui-monospace,monospace;color:var(--bad)}
.empty{border:1px dashed var(--line);border-radius:8px;padding:20px;background:var(--panel)}
#detail{position:fixed;right:16px;bottom:16px;width:380px;max-height:60vh;overflow:auto;background:#fff;
border:1px solid var(--line);border-radius:8px;box-shadow:0 4px 16px rgba(0,0,0,.15);padding:10px 12px;white-space:pre-wrap}
#detail[hidden]{display:none}
input[type=search]{font:inherit;padding:3px 8px;width:320px}
@media print{nav,.pager,#detail,.search,button{display:none!important}main{max-width:none}
.page[hidden]{display:block!important}
th{position:static}.lane,tr,svg,.card{break-inside:avoid}h2,h3{break-after:avoid}a{color:inherit;text-decoration:none}}
"""

JS = r"""
(function(){
'use strict';
var data=JSON.parse(document.getElementById('report-data').textContent);
var panel=document.getElementById('detail');
function show(lines){panel.textContent='';lines.forEach(function(t,i){var d=document.createElement(i?'div':'strong');
d.textContent=t;panel.appendChild(d);});var b=document.createElement('button');b.textContent='close';
b.addEventListener('click',function(){panel.hidden=true;});panel.appendChild(b);panel.hidden=false;}
function episode(id){var e=data.episodes[id];if(!e){return [id,'(not in the store)'];}
if(!e.present){return [id,'cited, but not in the store at HEAD'];}
return [id,e.type+' · '+e.ts,'session '+(e.session||'?')+' · agent '+(e.agent||'?'),e.content];}
document.addEventListener('click',function(ev){var t=ev.target.closest('[data-ep]');
if(t){ev.preventDefault();show(episode(t.getAttribute('data-ep')));return;}
var s=ev.target.closest('.step');var title=s&&s.querySelector('title');
if(title){show(title.textContent.split('\n'));}});
document.addEventListener('keydown',function(ev){if(ev.key==='Escape'){panel.hidden=true;}
if(ev.key==='Enter'){var t=ev.target.closest&&ev.target.closest('[data-ep]');if(t){show(episode(t.getAttribute('data-ep')));}}});
function pager(box){var pages=box.querySelectorAll(':scope > .page');if(pages.length<2){return;}
var bar=document.createElement('div');bar.className='pager';var prev=document.createElement('button');
prev.textContent='‹ previous';var next=document.createElement('button');next.textContent='next ›';
var label=document.createElement('span');bar.appendChild(prev);bar.appendChild(label);bar.appendChild(next);
box.parentNode.insertBefore(bar,box);var at=0;
function go(n){at=Math.max(0,Math.min(pages.length-1,n));for(var i=0;i<pages.length;i++){pages[i].hidden=i!==at;}
label.textContent='page '+(at+1)+' of '+pages.length;}
prev.addEventListener('click',function(){go(at-1);});next.addEventListener('click',function(){go(at+1);});
box.showAll=function(){for(var i=0;i<pages.length;i++){pages[i].hidden=false;}label.textContent='all pages';};
box.reset=function(){go(at);};
box.goTo=function(el){for(var i=0;i<pages.length;i++){if(pages[i].contains(el)){go(i);return;}}};go(0);}
document.querySelectorAll('.paged').forEach(pager);
var search=document.getElementById('table-search');
if(search){search.addEventListener('input',function(){var q=search.value.trim().toLowerCase();
document.querySelectorAll('table.data').forEach(function(tbl){var box=tbl.closest('.paged');
tbl.querySelectorAll('tbody tr').forEach(function(tr){tr.style.display=!q||tr.textContent.toLowerCase().indexOf(q)>=0?'':'none';});
if(box&&box.showAll){if(q){box.showAll();}else{box.reset();}}});});}
function reveal(){var id=decodeURIComponent(location.hash.slice(1));if(!id){return;}var el=document.getElementById(id);
if(!el){return;}var box=el.closest('.paged');if(box&&box.goTo){box.goTo(el);}
document.querySelectorAll('tr.target').forEach(function(r){r.classList.remove('target');});
if(el.tagName==='TR'){el.classList.add('target');}el.scrollIntoView({block:'center'});}
window.addEventListener('hashchange',reveal);reveal();
document.querySelectorAll('.graph-svg .node').forEach(function(n){var key=n.getAttribute('data-node');
function hot(on){document.querySelectorAll('.graph-svg .edge').forEach(function(e){
if(e.getAttribute('data-a')===key||e.getAttribute('data-b')===key){e.classList.toggle('hot',on);}});}
n.addEventListener('mouseenter',function(){hot(true);});n.addEventListener('mouseleave',function(){hot(false);});
n.addEventListener('focus',function(){hot(true);});n.addEventListener('blur',function(){hot(false);});});
document.body.setAttribute('data-ready','1');
})();
"""
